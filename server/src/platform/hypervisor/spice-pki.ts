/**
 * The certificates of the SPICE consoles' TLS: a certificate authority the portal creates at the
 * first start that needs it, and the server certificate it signs, in `<dataDir>/pki/spice/` (the
 * file names QEMU's `x509-dir` expects). The CA certificate and the server's subject go into every
 * `.vv` file, so a native client checks that it talks to this portal's hypervisor.
 */
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { errorMessage } from './host-process.ts';
import { HypervisorError } from './types.ts';

const run = promisify(execFile);

/** The subject of the server certificate, as SPICE clients compare it (`host-subject`). */
export const SPICE_HOST_SUBJECT = 'CN=vdi-portal-spice';

export interface SpicePki {
  /** The directory QEMU reads (`x509-dir`): ca-cert.pem, server-cert.pem, server-key.pem. */
  dir: string;
  /** The CA certificate, PEM. */
  caCertPem: string;
  hostSubject: string;
}

export function spicePkiDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'pki', 'spice');
}

/** The PKI of `dataDir` when it exists (complete), else null. */
export async function readSpicePki(dataDir: string): Promise<SpicePki | null> {
  const dir = spicePkiDir(dataDir);
  try {
    await fsp.access(path.join(dir, 'server-key.pem'));
    await fsp.access(path.join(dir, 'server-cert.pem'));
    const caCertPem = await fsp.readFile(path.join(dir, 'ca-cert.pem'), 'utf8');
    return { dir, caCertPem, hostSubject: SPICE_HOST_SUBJECT };
  } catch {
    return null;
  }
}

const creating = new Map<string, Promise<SpicePki>>();

/**
 * The PKI of `dataDir`, created with `openssl` when missing. It is built in a temporary directory
 * and renamed into place, so a crash never leaves a half-made one; concurrent calls share one run.
 */
export function ensureSpicePki(dataDir: string, openssl = 'openssl'): Promise<SpicePki> {
  const dir = spicePkiDir(dataDir);
  const pending = creating.get(dir);
  if (pending) return pending;
  const made = (async () => {
    const existing = await readSpicePki(dataDir);
    if (existing) return existing;
    await fsp.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
    const tmp = await fsp.mkdtemp(`${dir}.tmp-`);
    try {
      const file = (name: string) => path.join(tmp, name);
      const days = '3650';
      await run(openssl, [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        file('ca-key.pem'),
        '-out',
        file('ca-cert.pem'),
        '-days',
        days,
        '-subj',
        '/CN=VDI portal SPICE CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      await run(openssl, [
        'req',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        file('server-key.pem'),
        '-out',
        file('server.csr'),
        '-subj',
        `/${SPICE_HOST_SUBJECT}`,
      ]);
      await run(openssl, [
        'x509',
        '-req',
        '-in',
        file('server.csr'),
        '-CA',
        file('ca-cert.pem'),
        '-CAkey',
        file('ca-key.pem'),
        '-CAcreateserial',
        '-out',
        file('server-cert.pem'),
        '-days',
        days,
      ]);
      await fsp.rm(file('server.csr'), { force: true });
      await fsp.rename(tmp, dir).catch(async (error: unknown) => {
        // Another process made it first: keep theirs.
        if (!(await readSpicePki(dataDir))) throw error;
      });
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
    const pki = await readSpicePki(dataDir);
    if (!pki) throw new Error(`the SPICE certificates in ${dir} could not be created`);
    return pki;
  })();
  creating.set(dir, made);
  made.catch(() => creating.delete(dir));
  return made;
}

/** The SPICE certificates' directory for a start, made at the first start that needs it. */
export async function spiceCertificatesDir(dataDir: string): Promise<string> {
  try {
    return (await ensureSpicePki(dataDir)).dir;
  } catch (error) {
    throw new HypervisorError(
      'start_failed',
      `cannot create the SPICE certificates: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}
