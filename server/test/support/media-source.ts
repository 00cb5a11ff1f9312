/**
 * A local HTTP source of media for the tests and the benchmark (named in MEDIA_ALLOWED_HOSTS):
 * the grub rescue ISO and floppy, at full speed or throttled, a web page, a body cut short, a body
 * without a length, redirects and errors. It counts the connections it accepts.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';

export const GRUB_ISO = readFileSync('/usr/lib/grub-rescue/grub-rescue-cdrom.iso');
export const GRUB_FLOPPY = readFileSync('/usr/lib/grub-rescue/grub-rescue-floppy.img');

export interface MediaSource {
  /** `127.0.0.1:<port>`, the MEDIA_ALLOWED_HOSTS entry */
  host: string;
  port: number;
  url(path: string): string;
  /** connections accepted so far */
  connections(): number;
  /** the next request of /flaky.iso is cut after 1 MB */
  cutNext(): void;
  close(): Promise<void>;
}

const CHUNK = 64 * 1024;

/** Writes `data` at about `rate` bytes per second (as fast as the socket takes it without one). */
async function send(res: http.ServerResponse, data: Buffer, rate: number | null): Promise<void> {
  const started = Date.now();
  for (let sent = 0; sent < data.length && !res.destroyed; sent += CHUNK) {
    const chunk = data.subarray(sent, sent + CHUNK);
    if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
    if (rate) {
      const due = started + ((sent + chunk.length) * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
  res.end();
}

export async function startMediaSource(extra: Record<string, Buffer> = {}): Promise<MediaSource> {
  let connections = 0;
  let cut = false;
  const sockets = new Set<Socket>();
  const files: Record<string, Buffer> = {
    '/grub.iso': GRUB_ISO,
    '/grub-floppy.img': GRUB_FLOPPY,
    '/page.html': Buffer.from('<!doctype html><title>Downloads</title><p>Not an image</p>'),
    ...extra,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://source');
    const rate = url.searchParams.has('rate') ? Number(url.searchParams.get('rate')) : null;
    const file = files[url.pathname];
    if (file) {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': file.length,
      });
      void send(res, file, rate);
    } else if (url.pathname === '/flaky.iso') {
      res.writeHead(200, { 'content-length': GRUB_ISO.length });
      if (cut) {
        cut = false;
        res.write(GRUB_ISO.subarray(0, 1024 * 1024), () => res.destroy());
      } else void send(res, GRUB_ISO, rate);
    } else if (url.pathname === '/unsized.iso') {
      // no Content-Length: chunked transfer of `bytes` bytes
      const bytes = Number(url.searchParams.get('bytes') ?? GRUB_ISO.length);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      void send(
        res,
        Buffer.concat([GRUB_ISO, Buffer.alloc(Math.max(0, bytes - GRUB_ISO.length))]).subarray(
          0,
          bytes,
        ),
        rate,
      );
    } else if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : 0);
    }),
  );
  return {
    host: `127.0.0.1:${port}`,
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    connections: () => connections,
    cutNext: () => {
      cut = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
