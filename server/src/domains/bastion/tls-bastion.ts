/**
 * The HTTPS bastion: TLS passed through by SNI, not terminated (the guest holds its own
 * certificate). A connection to BASTION_HTTPS_PORT is read up to its ClientHello; the server name
 * it asks for, `<target id>.<bastion domain>` or a target's custom domain, picks the target; while
 * its HTTP access is on and the desktop runs with an address, the bytes go to the guest's HTTPS
 * port both ways. Otherwise (no name, no target, access off, desktop down, guest silent) the
 * connection is closed: without a certificate there is no page to answer with.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Bastion } from '../../../../src/generated/types.ts';
import { reachGuest, type Reach } from './bastion-reach.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The most a ClientHello may take before its server name is known. */
const MAX_HELLO = 16 * 1024;
const HELLO_TIMEOUT_MS = 10_000;

/**
 * The server name (SNI) of a TLS ClientHello at the start of `data`; null when there is none,
 * undefined while more bytes are needed.
 */
export function sniOf(data: Buffer): string | null | undefined {
  if (data.length < 5) return undefined;
  if (data[0] !== 0x16) return null; // not a TLS handshake record
  const recordEnd = 5 + data.readUInt16BE(3);
  if (data.length < recordEnd) return data.length >= MAX_HELLO ? null : undefined;
  let p = 5;
  if (data[p] !== 0x01) return null; // not a ClientHello
  p += 4 + 2 + 32; // handshake header, client version, random
  const skip = (lengthBytes: 1 | 2) => {
    if (p + lengthBytes > recordEnd) return false;
    p += lengthBytes + (lengthBytes === 1 ? data.readUInt8(p) : data.readUInt16BE(p));
    return p <= recordEnd;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return null; // session id, cipher suites, compression
  if (p + 2 > recordEnd) return null;
  const extensionsEnd = Math.min(recordEnd, p + 2 + data.readUInt16BE(p));
  p += 2;
  while (p + 4 <= extensionsEnd) {
    const type = data.readUInt16BE(p);
    const length = data.readUInt16BE(p + 2);
    p += 4;
    if (type === 0x0000 && p + 5 <= extensionsEnd && data[p + 2] === 0x00) {
      const nameLength = data.readUInt16BE(p + 3);
      const start = p + 5;
      if (start + nameLength > extensionsEnd) return null;
      return data
        .subarray(start, start + nameLength)
        .toString('ascii')
        .toLowerCase();
    }
    p += length;
  }
  return null;
}

export interface TlsBastion {
  port: number;
  close(): Promise<void>;
}

/** The target a server name picks (`<target id>.<domain>`, else a custom domain). */
export async function targetOfName(
  app: FastifyInstance,
  name: string,
): Promise<Bastion | undefined> {
  const { bastion } = await app.settings.all();
  const domain = bastion.domain?.toLowerCase();
  if (!bastion.enabled || !domain) return undefined;
  if (name.endsWith(`.${domain}`)) {
    const label = name.slice(0, -domain.length - 1);
    return UUID.test(label) ? app.bastion.byIdOrDomain({ id: label }) : undefined;
  }
  return bastion.individual_domains ? app.bastion.byIdOrDomain({ domain: name }) : undefined;
}

/** How a server name reaches a guest under the bastion's rules. */
export const reachByName =
  (app: FastifyInstance) =>
  async (name: string): Promise<Reach> =>
    reachGuest(app, await targetOfName(app, name), 'http');

export async function startTlsBastion(options: {
  host: string;
  port: number;
  /** how a server name reaches a guest (reachByName; tests stand in for a guest) */
  reach: (name: string) => Promise<Reach>;
}): Promise<TlsBastion> {
  const { reach } = options;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    client.setTimeout(HELLO_TIMEOUT_MS, () => client.destroy());
    let hello = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      hello = Buffer.concat([hello, chunk]);
      const name = sniOf(hello);
      if (name === undefined) return;
      client.off('data', onData);
      client.pause();
      if (!name) return client.destroy();
      void reach(name).then(
        (found) => {
          if (!found.ok) return client.destroy();
          const guest = net.connect(found.target.http.https_port, found.ip);
          guest.on('error', () => client.destroy());
          guest.once('connect', () => {
            client.setTimeout(0);
            guest.write(hello);
            client.pipe(guest).pipe(client);
            client.resume();
          });
          client.on('close', () => guest.destroy());
          guest.on('close', () => client.destroy());
        },
        () => client.destroy(),
      );
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
