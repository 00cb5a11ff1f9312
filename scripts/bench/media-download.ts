/**
 * Media benchmark:
 * `npx tsx scripts/bench/media-download.ts [--size-mb 512] [--runs 3] [--items 1000]`.
 *
 * Starts a private PostgreSQL and the app in this process (MEDIA_ALLOWED_HOSTS = a local source),
 * then:
 * 1. Download throughput from loopback: POST /media of an ISO of `--size-mb` served by a local
 *    HTTP server as fast as the socket takes it, timed from the POST until the medium is
 *    `downloaded` (the file whole and checked), alternately without and with a socket.io client
 *    subscribed to the owner's room (it counts the `media_update` events it receives). Each
 *    finished medium is deleted (its file goes). Target: >= 100 MB/s, and the subscribed runs no
 *    more than 10 % slower (medians).
 * 2. GET /media with `--items` media of the caller: time to the first byte of the answer (the
 *    first row) and to the whole answer, median of 5. Target: first row <= 1 s.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { io as connect } from 'socket.io-client';
import { startPostgres } from '../../tests/support/postgres.ts';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { media } from '../../server/src/platform/db/schema.ts';
import { seedIfEmpty } from '../../server/src/seed/index.ts';
import { ISO_MAGIC, ISO_MAGIC_OFFSET } from '../../server/src/domains/media/media-format.ts';

const { values } = parseArgs({
  options: {
    'size-mb': { type: 'string', default: '512' },
    runs: { type: 'string', default: '5' },
    items: { type: 'string', default: '1000' },
  },
});
const SIZE = Number(values['size-mb']) * 1024 * 1024;
const RUNS = Number(values.runs);
const ITEMS = Number(values.items);
const TARGET_MBPS = 100;
const TARGET_SLOWDOWN = 0.1;
const TARGET_FIRST_ROW_MS = 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};
const mb = (bytes: number) => bytes / 1e6;

/** An ISO of SIZE bytes: the magic in the first MiB, zeros after, written 1 MiB at a time. */
function isoSource(): Promise<{ server: http.Server; port: number }> {
  const chunk = Buffer.alloc(1024 * 1024);
  const first = Buffer.alloc(1024 * 1024);
  ISO_MAGIC.copy(first, ISO_MAGIC_OFFSET);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': SIZE, 'content-type': 'application/octet-stream' });
    let sent = 0;
    const pump = () => {
      while (sent < SIZE) {
        const piece = (sent === 0 ? first : chunk).subarray(0, Math.min(chunk.length, SIZE - sent));
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve({ server, port: typeof addr === 'object' && addr ? addr.port : 0 });
    }),
  );
}

const pg = await startPostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-media-'));
const source = await isoSource();
const password = 'bench-password';
const app = await buildApp({
  ...loadConfig({}),
  dataDir,
  databaseUrl: pg.url,
  logLevel: 'silent',
  host: '127.0.0.1',
  port: 0,
  distDir: join(dataDir, 'none'),
  prepareImages: false,
  mediaAllowedHosts: [`127.0.0.1:${source.port}`],
});
let failed = false;
try {
  await seedIfEmpty(app, { password });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const token = await (
    await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
      method: 'POST',
      body: new URLSearchParams({ username: 'advanced', password }),
    })
  ).text();
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

  /** One download, timed from the POST to `downloaded`; answers MB/s. */
  const download = async (subscribed: boolean): Promise<{ mbps: number; events: number }> => {
    let events = 0;
    const socket = subscribed
      ? connect(base, {
          path: '/api/v3/socket.io',
          transports: ['websocket'],
          reconnection: false,
          auth: { jwt: token },
          extraHeaders: { origin: base },
        })
      : null;
    if (socket) {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      socket.on('media_update', () => events++);
    }
    // Dirty pages of the previous run are written out first, so no run pays for another's.
    execFileSync('sync');
    const name = `bench ${randomUUID().slice(0, 8)}`;
    const started = performance.now();
    const res = await fetch(`${base}/api/v3/media`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name, kind: 'iso', url: `http://127.0.0.1:${source.port}/big.iso` }),
    });
    if (res.status !== 200) throw new Error(`POST /media ${res.status} ${await res.text()}`);
    const [row] = await app.media.list({ where: eq(media.name, name) });
    const id = row?.id ?? '';
    for (;;) {
      const status = (await app.media.get(id))?.status;
      if (status === 'downloaded') break;
      if (status !== 'downloading' && status !== 'downloadstarting')
        throw new Error(`download ended ${status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const seconds = (performance.now() - started) / 1000;
    socket?.close();
    const gone = await fetch(`${base}/api/v3/media/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    if (gone.status !== 200) throw new Error(`DELETE /media ${gone.status} ${await gone.text()}`);
    return { mbps: mb(SIZE) / seconds, events };
  };

  console.log(`download of a ${values['size-mb']} MiB ISO from loopback, ${RUNS} runs per mode`);
  await download(false); // warm-up
  const plain: number[] = [];
  const watched: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternating which mode goes first, so disk write-back between runs weighs on both alike.
    const order = i % 2 === 0 ? [false, true] : [true, false];
    const runs = [];
    for (const subscribed of order) runs.push({ subscribed, ...(await download(subscribed)) });
    const without = runs.find((r) => !r.subscribed);
    const withSocket = runs.find((r) => r.subscribed);
    plain.push(without?.mbps ?? NaN);
    watched.push(withSocket?.mbps ?? NaN);
    console.log(
      `  run ${i + 1}: ${without?.mbps.toFixed(0)} MB/s without a socket, ${withSocket?.mbps.toFixed(0)} MB/s with one (${withSocket?.events} media_update events)`,
    );
  }
  const p = median(plain);
  const w = median(watched);
  const slowdown = (p - w) / p;
  const throughputOk = p >= TARGET_MBPS && w >= TARGET_MBPS;
  const slowdownOk = slowdown <= TARGET_SLOWDOWN;
  console.log(
    `throughput (median): ${p.toFixed(0)} MB/s without a socket, ${w.toFixed(0)} MB/s subscribed, slowdown ${(slowdown * 100).toFixed(1)} % -> ${throughputOk && slowdownOk ? 'PASS' : 'FAIL'} (target >= ${TARGET_MBPS} MB/s, slowdown <= ${TARGET_SLOWDOWN * 100} %)`,
  );
  failed ||= !throughputOk || !slowdownOk;

  const owner = await app.users.findLocal('advanced', 'default');
  if (!owner) throw new Error('no advanced user');
  await app.db.insert(media).values(
    Array.from({ length: ITEMS }, (_, i) => ({
      id: randomUUID(),
      name: `item ${String(i).padStart(5, '0')}`,
      kind: 'iso' as const,
      status: 'downloaded' as const,
      url: 'https://example.org/a.iso',
      size: 5_000_000,
      userId: owner.id,
      categoryId: owner.categoryId,
      groupId: owner.groupId,
    })),
  );
  const listTimes = async () =>
    new Promise<{ first: number; total: number; rows: number }>((resolve, reject) => {
      const started = performance.now();
      let first = 0;
      const chunks: Buffer[] = [];
      http
        .get(`${base}/api/v3/media`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
          res.on('data', (c: Buffer) => {
            first ||= performance.now() - started;
            chunks.push(c);
          });
          res.on('end', () => {
            const rows = (JSON.parse(Buffer.concat(chunks).toString()) as unknown[]).length;
            resolve({ first, total: performance.now() - started, rows });
          });
        })
        .on('error', reject);
    });
  await listTimes(); // warm-up
  const lists = [];
  for (let i = 0; i < 5; i++) lists.push(await listTimes());
  const firstRow = median(lists.map((l) => l.first));
  const whole = median(lists.map((l) => l.total));
  const listOk = firstRow <= TARGET_FIRST_ROW_MS && lists.every((l) => l.rows === ITEMS);
  console.log(
    `GET /media with ${lists[0]?.rows} media: first row ${firstRow.toFixed(1)} ms, whole answer ${whole.toFixed(1)} ms (median of 5) -> ${listOk ? 'PASS' : 'FAIL'} (target first row <= ${TARGET_FIRST_ROW_MS} ms)`,
  );
  failed ||= !listOk;
} finally {
  await app.close();
  await new Promise((r) => source.server.close(r));
  pg.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
