/**
 * Sockets after a restart: `npx tsx scripts/bench/socket-reconnect.ts [--clients 500] [--runs 1]`.
 * Runs the portal as `npm start` does (the compiled bundle, embedded PGlite, its own DATA_DIR and
 * port) in a child process, signs the seeded students in, opens `clients` socket.io clients with
 * the SPA's settings (websocket only, the JWT in the handshake, reconnects every 1-2 s without
 * limit), then restarts the portal (SIGTERM, start again on the same port and data) and measures
 * when each client is connected again.
 * Target: at least 95 % of the clients connected again within 10 s of the new process listening.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { io, type Socket } from 'socket.io-client';
import { buildServer, serverBundleStale, SERVER_BUNDLE } from '../lib/build-server.mjs';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '500' },
    runs: { type: 'string', default: '1' },
  },
});
const clients = Number(values.clients);
const TARGET_SHARE = 0.95;
const TARGET_MS = 10_000;
const root = new URL('../..', import.meta.url).pathname;
const password = 'bench-password';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts the portal; resolves once it prints that it listens. */
function startPortal(port: number, dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SERVER_BUNDLE], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEMO_PASSWORD: password,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on/.test(output)) resolve(child);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`the portal ended (${code}): ${output.slice(-800)}`)),
    );
  });
}

function stopPortal(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function signIn(base: string, username: string): Promise<string> {
  for (;;) {
    const res = await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
      method: 'POST',
      body: new URLSearchParams({ username, password }),
    });
    if (res.status === 200) return res.text();
    if (res.status !== 503) throw new Error(`sign-in of ${username}: ${res.status}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) : 0;

if (serverBundleStale(root)) await buildServer(root);
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let portal = await startPortal(port, dataDir);
const sockets: Socket[] = [];
let failed = false;
try {
  const tokens: string[] = [];
  for (let i = 1; i <= 42; i += 1)
    tokens.push(await signIn(base, `student${String(i).padStart(2, '0')}`));
  const connectedAt = new Map<Socket, number>();
  for (let i = 0; i < clients; i += 1) {
    const token = tokens[i % tokens.length] ?? '';
    const socket = io(base, {
      path: '/api/v3/socket.io',
      transports: ['websocket'],
      // A browser sends its page's origin; the portal refuses a websocket from any other.
      extraHeaders: { origin: base },
      auth: (cb) => cb({ jwt: token }),
      reconnection: true,
      reconnectionAttempts: Infinity,
      reconnectionDelay: 1000,
      reconnectionDelayMax: 2000,
      randomizationFactor: 0.5,
      timeout: 3000,
    });
    socket.on('connect', () => connectedAt.set(socket, performance.now()));
    sockets.push(socket);
  }
  const allConnected = async (since: number, limitMs: number) => {
    const deadline = performance.now() + limitMs;
    while (performance.now() < deadline) {
      if (sockets.every((s) => s.connected && (connectedAt.get(s) ?? 0) >= since)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const opened = performance.now();
  await allConnected(opened, 60_000);
  console.log(
    `${sockets.filter((s) => s.connected).length} of ${clients} sockets connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`,
  );

  for (let run = 1; run <= Number(values.runs); run += 1) {
    const stopping = performance.now();
    await stopPortal(portal);
    const stopped = performance.now();
    portal = await startPortal(port, dataDir);
    const listening = performance.now();
    await allConnected(stopped, 30_000);
    const delays = sockets
      .map((s) => (connectedAt.get(s) ?? 0) - listening)
      .filter((ms, i) => (connectedAt.get(sockets[i] as Socket) ?? 0) >= stopped)
      .sort((a, b) => a - b);
    const within = delays.filter((ms) => ms <= TARGET_MS).length;
    const share = within / clients;
    console.log(
      `run ${run}: stop ${((stopped - stopping) / 1000).toFixed(1)} s, start to listening ${((listening - stopped) / 1000).toFixed(1)} s; ` +
        `${delays.length} of ${clients} connected again, ${within} (${(share * 100).toFixed(1)} %) within ${TARGET_MS / 1000} s of listening; ` +
        `after listening p50 ${quantile(delays, 0.5).toFixed(0)} ms, p95 ${quantile(delays, 0.95).toFixed(0)} ms, last ${(delays.at(-1) ?? 0).toFixed(0)} ms`,
    );
    if (share < TARGET_SHARE) failed = true;
  }
  console.log(
    `${failed ? 'FAIL' : 'PASS'}: ≥ ${TARGET_SHARE * 100} % connected again within ${TARGET_MS / 1000} s`,
  );
} finally {
  for (const socket of sockets) socket.close();
  await stopPortal(portal).catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
