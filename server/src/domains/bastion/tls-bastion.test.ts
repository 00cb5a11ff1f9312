/**
 * The HTTPS passthrough without a VM: a TLS server on the loopback stands in for a guest. The
 * bastion reads the server name of the ClientHello, passes the bytes through to that guest (the
 * client sees the guest's own certificate), and closes connections it has no guest for.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bastion } from '../../../../src/generated/types.ts';
import { startTlsBastion, type TlsBastion } from './tls-bastion.ts';

const target: Bastion = {
  id: 't-1',
  desktop_id: 'd-1',
  user_id: 'u-1',
  http: { enabled: true, http_port: 80, https_port: 0 },
  ssh: { enabled: false, port: 22, authorized_keys: [] },
};

/** A TLS client's first answer (or why it had none), with the certificate's subject. */
function hello(port: number, servername: string) {
  return new Promise<string>((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      socket.write('ping');
      socket.once('data', (d: Buffer) => {
        resolve(`${socket.getPeerCertificate().subject.CN} ${d.toString()}`);
        socket.end();
      });
    });
    socket.once('error', () => resolve('closed'));
    socket.once('close', () => resolve('closed'));
  });
}

describe('the HTTPS bastion (SNI passthrough)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-bastion-'));
  let guest: tls.Server;
  let bastion: TlsBastion;
  const names: string[] = [];

  beforeAll(async () => {
    execFileSync('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ...['-subj', '/CN=guest.test', '-days', '1'],
    ]);
    guest = tls.createServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (socket) => socket.on('data', (d: Buffer) => socket.write(`pong to ${d.toString()}`)),
    );
    await new Promise<void>((resolve) => guest.listen(0, '127.0.0.1', resolve));
    const guestPort = (guest.address() as { port: number }).port;
    bastion = await startTlsBastion({
      host: '127.0.0.1',
      port: 0,
      reach: async (name) => {
        names.push(name);
        return name === 'known.bastion.test'
          ? {
              ok: true,
              ip: '127.0.0.1',
              guest: { username: '', password: '' },
              target: { ...target, http: { ...target.http, https_port: guestPort } },
            }
          : { ok: false, reason: 'no_target' };
      },
    });
  });
  afterAll(async () => {
    await bastion?.close();
    guest?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes a known name through to its guest and closes the others', async () => {
    expect(await hello(bastion.port, 'known.bastion.test')).toBe('guest.test pong to ping');
    expect(await hello(bastion.port, 'other.bastion.test')).toBe('closed');
    expect(names).toEqual(['known.bastion.test', 'other.bastion.test']);
  });
});
