/**
 * Desktop list over the wire, per content encoding:
 *
 *   npx tsx scripts/bench/list-size.ts [--desktops 5000] [--runs 5] [--postgres]
 *
 * Builds the app IN this process on a fresh temp DATA_DIR (embedded PGlite, or a private PostgreSQL
 * with --postgres; HYPERVISOR=none, no demo images, no built SPA), seeds the demo accounts plus N
 * desktops for `user` (who then has N + 3), logs in over HTTP and fetches GET /api/v3/user/desktops
 * with `Accept-Encoding` identity, gzip and br over a real socket. Prints, per encoding, the bytes on
 * the wire, the share of the raw size, and the request time of the first fetch and the median over
 * the runs. Checks that every encoded answer decodes to the same JSON: the data set is quiet while
 * it is fetched (the seeded demo desktops, `creating`, are parked as `stopped` before the engine's
 * first reconcile tick could move them, and no listed desktop is in a transitional state).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { desktops } from '../../server/src/platform/db/schema.ts';
import { desktopStates } from '../../src/generated/policy.ts';
import { seedDesktops, seedIfEmpty } from '../../server/src/seed/index.ts';
import { startPostgres, type PgCluster } from '../../tests/support/postgres.ts';

const { values: args } = parseArgs({
  options: {
    desktops: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '5' },
    postgres: { type: 'boolean', default: false },
  },
});
const N_DESKTOPS = Number(args.desktops);
const RUNS = Math.max(1, Number(args.runs));
const PASSWORD = 'bench-demo-password';
const ROOT = join(import.meta.dirname, '..', '..');
const ENCODINGS = ['identity', 'gzip', 'br'] as const;
type Encoding = (typeof ENCODINGS)[number];

interface Fetched {
  status: number;
  encoding: string | undefined;
  body: Buffer;
  ms: number;
}

/** GET with a raw socket client: the body exactly as sent (never decoded) and the time to its end. */
function get(url: string, headers: Record<string, string>): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const encoding = res.headers['content-encoding'];
        resolve({
          status: res.statusCode ?? 0,
          encoding: typeof encoding === 'string' ? encoding : undefined,
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function decode(fetched: Fetched): string {
  if (fetched.encoding === 'br') return brotliDecompressSync(fetched.body).toString('utf8');
  if (fetched.encoding === 'gzip') return gunzipSync(fetched.body).toString('utf8');
  if (fetched.encoding === undefined) return fetched.body.toString('utf8');
  throw new Error(`unexpected content-encoding ${fetched.encoding}`);
}

interface ListedDesktop {
  id: string;
  state?: string;
}

const transitional = new Set<string>(desktopStates.transitional);

/** The reference answer, checked to be one no background work is about to change. */
function quiet(text: string): string {
  const moving = (JSON.parse(text) as ListedDesktop[]).filter((d) =>
    transitional.has(d.state ?? ''),
  );
  if (moving.length)
    throw new Error(
      `the list is not quiet: ${moving.map((d) => `${d.id} ${String(d.state)}`).join(', ')}`,
    );
  return text;
}

/** Which records two answers disagree on (ids and their states), for the error message. */
function differences(a: string, b: string): string {
  const byId = (text: string) =>
    new Map((JSON.parse(text) as ListedDesktop[]).map((d) => [d.id, JSON.stringify(d)]));
  const left = byId(a);
  const right = byId(b);
  const ids = [...new Set([...left.keys(), ...right.keys()])].filter(
    (id) => left.get(id) !== right.get(id),
  );
  return ids.length
    ? ids
        .slice(0, 5)
        .map((id) => `${id}: ${left.get(id) ?? 'absent'} -> ${right.get(id) ?? 'absent'}`)
        .join('; ')
    : 'same records in another order';
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

let app: FastifyInstance | undefined;
let pg: PgCluster | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-list-'));

async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DEMO_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
    HYPERVISOR: 'none',
  };
  if (args.postgres) {
    pg = await startPostgres();
    env.DATABASE_URL = pg.url;
  }
  const config = {
    ...loadConfig(env, ROOT),
    port: 0,
    prepareImages: false,
    distDir: join(dataDir, 'no-dist'),
  };
  app = await buildApp(config);
  await seedIfEmpty(app, { password: PASSWORD });
  // The demo desktops are `creating`: the reconciler would make their disks (or fail them, with no
  // images) between two fetches, and the answers would differ by those records. Park them first.
  const creating = await app.db
    .select({ id: desktops.id })
    .from(desktops)
    .where(eq(desktops.state, 'creating'));
  for (const { id } of creating) await app.desktops.update(id, { state: 'stopped' }, ['creating']);
  const seedStart = performance.now();
  await seedDesktops(app, 'user', N_DESKTOPS);
  console.log(
    `seeded ${N_DESKTOPS} desktops in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (${args.postgres ? 'PostgreSQL' : 'PGlite'})`,
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}`;

  const login = await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'user', password: PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login -> ${login.status}`);
  const token = (await login.text()).trim();
  const url = `${base}/api/v3/user/desktops`;

  let reference: string | undefined;
  let rawBytes = 0;
  const rows: string[] = [];
  for (const encoding of ENCODINGS) {
    const times: number[] = [];
    let first: Fetched | undefined;
    for (let run = 0; run < RUNS; run++) {
      const fetched = await get(url, {
        authorization: `Bearer ${token}`,
        'accept-encoding': encoding,
      });
      if (fetched.status !== 200) throw new Error(`GET ${url} (${encoding}) -> ${fetched.status}`);
      const wanted: Encoding | undefined = encoding === 'identity' ? undefined : encoding;
      if (fetched.encoding !== wanted)
        throw new Error(`asked ${encoding}, got content-encoding ${String(fetched.encoding)}`);
      const text = decode(fetched);
      reference ??= quiet(text);
      if (text !== reference)
        throw new Error(
          `${encoding} answer decodes to a different list: ${differences(reference, text)}`,
        );
      first ??= fetched;
      times.push(fetched.ms);
    }
    if (!first) continue;
    if (encoding === 'identity') {
      rawBytes = first.body.length;
      const count = (JSON.parse(first.body.toString('utf8')) as unknown[]).length;
      if (count !== N_DESKTOPS + 3)
        throw new Error(`expected ${N_DESKTOPS + 3} desktops, got ${count}`);
      console.log(`GET /api/v3/user/desktops: ${count} desktops`);
    }
    rows.push(
      [
        encoding.padEnd(8),
        String(first.body.length).padStart(10),
        `${((100 * first.body.length) / rawBytes).toFixed(1)}%`.padStart(7),
        `${first.ms.toFixed(1)} ms`.padStart(10),
        `${median(times).toFixed(1)} ms`.padStart(12),
      ].join('  '),
    );
  }
  console.log(['encoding', '     bytes', '  share', '     first', `median of ${RUNS}`].join('  '));
  for (const row of rows) console.log(row);
}

try {
  await main();
} finally {
  await app?.close().catch((err: unknown) => console.error('server close failed:', err));
  try {
    pg?.stop();
  } catch (err) {
    console.error('postgres stop failed:', err);
  }
  rmSync(dataDir, { recursive: true, force: true });
}
