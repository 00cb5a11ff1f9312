/**
 * The portal's SSH keys, kept in files and made at the first need (ed25519, OpenSSH format):
 * the client key the bastion signs in to guests with (its public half is what guests trust: the
 * Tiny Linux template gets it on its kernel command line) and the host key of the bastion's SSH
 * server. The public half sits beside the private one as `<file>.pub`.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ssh2Library } from './ssh2-library.ts';

export interface SshKeyPair {
  /** OpenSSH private key */
  privateKey: string;
  /** one authorized_keys line */
  publicKey: string;
}

/** The key pair in `file` (and `file.pub`), written first when missing (ssh2 is loaded only then). */
export async function sshKeyPair(file: string, comment: string): Promise<SshKeyPair> {
  const pub = `${file}.pub`;
  if (!existsSync(file) || !existsSync(pub)) {
    const { utils } = await ssh2Library();
    const made = utils.generateKeyPairSync('ed25519', { comment });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, made.private, { mode: 0o600 });
    chmodSync(file, 0o600);
    writeFileSync(pub, `${made.public.trim()}\n`);
  }
  return {
    privateKey: readFileSync(file, 'utf8'),
    publicKey: readFileSync(pub, 'utf8').trim(),
  };
}

/** The portal's client key for guests: BASTION_KEY_FILE, else under the data dir. */
export function portalKeyFile(config: {
  dataDir: string;
  bastion: { keyFile?: string | undefined };
}) {
  return config.bastion.keyFile ?? join(config.dataDir, 'bastion', 'portal_ed25519');
}

/** The bastion SSH server's host key, under the data dir. */
export function hostKeyFile(config: { dataDir: string }) {
  return join(config.dataDir, 'bastion', 'host_ed25519');
}
