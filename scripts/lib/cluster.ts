/**
 * Several portal nodes on one PostgreSQL behind HAProxy, on this machine: a private PostgreSQL
 * cluster, N nodes of the server bundle (one DATA_DIR for their disks, each its own port and
 * NODE_NAME, TRUST_PROXY on) and HAProxy with `deploy/haproxy.cfg` rewritten for their ports.
 * `npm run cluster` runs it for a person to try; the cluster end-to-end test runs it too.
 *
 * The first node starts alone (it migrates the database and seeds the demo); the others start
 * once it answers its health check.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_BUNDLE, SERVER_MALLOC_ENV } from './build-server.mjs';
import { root } from './bootstrap.mjs';
import { startPostgres } from '../../tests/support/postgres.ts';
import { killQemus } from '../../tests/support/qemu-teardown.ts';

export interface ClusterNode {
  /** NODE_NAME: `node-<n>` */
  name: string;
  /** the node's own address, bypassing HAProxy */
  url: string;
  /** its process id */
  pid: number;
  /** whether the process still runs */
  running(): boolean;
  /** Ends the node at once (SIGKILL), as a crash would; resolves once it has exited. */
  crash(): Promise<void>;
}

export interface Cluster {
  /** HAProxy's address: what users open */
  url: string;
  databaseUrl: string;
  /** the nodes' shared DATA_DIR (disks, run files) */
  dataDir: string;
  nodes: ClusterNode[];
  /** Stops HAProxy, the nodes (SIGTERM, then SIGKILL), their desktops and PostgreSQL. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** how many portal nodes (at least 1) */
  nodes: number;
  /** HAProxy's port; node n listens on port + n */
  port: number;
  /** extra environment of every node (DEMO_PASSWORD, QEMU_ACCEL …) */
  env?: Record<string, string>;
  /** where the nodes' and HAProxy's output goes, line by line, prefixed with their name */
  output?: (line: string) => void;
  /** how long a node may take to answer its health check */
  startupMs?: number;
  /** extra options of every node's `node` (`--cpu-prof`, which NODE_OPTIONS does not allow) */
  nodeArgs?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function healthy(url: string): Promise<boolean> {
  return fetch(`${url}/api/v3/health`)
    .then((response) => response.ok)
    .catch(() => false);
}

/** Sends a child's output to `output`, one prefixed line at a time. */
function pipeLines(child: ChildProcess, prefix: string, output: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) output(`[${prefix}] ${line}`);
    });
  }
}

/** HAProxy's configuration for these ports: the file in deploy/, with its bind and servers replaced. */
export function haproxyConfig(port: number, nodePorts: readonly number[]): string {
  const template = readFileSync(join(root, 'deploy', 'haproxy.cfg'), 'utf8');
  const servers = nodePorts.map(
    (nodePort, index) =>
      `  server node-${index + 1} 127.0.0.1:${nodePort} cookie node-${index + 1}`,
  );
  const lines = template.split('\n');
  const first = lines.findIndex((line) => /^\s+server /.test(line));
  if (first < 0 || !template.includes('bind *:8080'))
    throw new Error('deploy/haproxy.cfg has no `bind *:8080` or no server line to replace');
  const kept = lines.filter((line) => !/^\s+server /.test(line));
  kept.splice(first, 0, ...servers);
  return kept.join('\n').replace('bind *:8080', `bind 127.0.0.1:${port}`);
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const output = options.output ?? ((line: string) => console.log(line));
  const startupMs = options.startupMs ?? 150_000;
  const url = `http://127.0.0.1:${options.port}`;
  const postgres = await startPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), 'vdi-cluster-'));
  const children: ChildProcess[] = [];
  let haproxy: ChildProcess | undefined;

  const stop = async (): Promise<void> => {
    haproxy?.kill('SIGTERM');
    const alive = children.filter((child) => child.exitCode === null && child.signalCode === null);
    const exits = alive.map(
      (child) => new Promise<void>((resolve) => child.once('exit', () => resolve())),
    );
    for (const child of alive) child.kill('SIGTERM');
    await Promise.race([Promise.all(exits), sleep(10_000)]);
    for (const child of alive) if (child.exitCode === null) child.kill('SIGKILL');
    await killQemus(dataDir);
    postgres.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };

  const startNode = (index: number): ClusterNode & { ready: Promise<void> } => {
    const name = `node-${index + 1}`;
    const port = options.port + index + 1;
    const nodeUrl = `http://127.0.0.1:${port}`;
    const nodeArgs = [...(options.nodeArgs ?? []), join(root, SERVER_BUNDLE)];
    const child = spawn(process.execPath, nodeArgs, {
      cwd: root,
      env: {
        ...SERVER_MALLOC_ENV,
        ...process.env,
        ...options.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        NODE_NAME: name,
        DATABASE_URL: postgres.url,
        DATA_DIR: dataDir,
        TRUST_PROXY: '1',
        PUBLIC_URL: url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    pipeLines(child, name, output);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const running = () => child.exitCode === null && child.signalCode === null;
    const ready = (async () => {
      const deadline = Date.now() + startupMs;
      while (!(await healthy(nodeUrl))) {
        if (!running()) throw new Error(`${name} exited before it answered its health check`);
        if (Date.now() > deadline) throw new Error(`${name} did not start in ${startupMs} ms`);
        await sleep(250);
      }
    })();
    return {
      name,
      url: nodeUrl,
      pid: child.pid ?? 0,
      running,
      crash: async () => {
        if (running()) child.kill('SIGKILL');
        await exited;
      },
      ready,
    };
  };

  try {
    const first = startNode(0);
    await first.ready;
    const rest = Array.from({ length: Math.max(0, options.nodes - 1) }, (_, i) => startNode(i + 1));
    await Promise.all(rest.map((node) => node.ready));
    const nodes = [first, ...rest];

    const configDir = mkdtempSync(join(tmpdir(), 'vdi-haproxy-'));
    const config = join(configDir, 'haproxy.cfg');
    writeFileSync(
      config,
      haproxyConfig(
        options.port,
        nodes.map((_, index) => options.port + index + 1),
      ),
    );
    haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    pipeLines(haproxy, 'haproxy', output);
    haproxy.once('exit', () => rmSync(configDir, { recursive: true, force: true }));
    const deadline = Date.now() + 10_000;
    while (!(await healthy(url))) {
      if (haproxy.exitCode !== null) throw new Error('haproxy exited (see its output above)');
      if (Date.now() > deadline) throw new Error(`haproxy did not answer on ${url}`);
      await sleep(100);
    }
    return {
      url,
      databaseUrl: postgres.url,
      dataDir,
      nodes: nodes.map(({ name, url: nodeUrl, pid, running, crash }) => ({
        name,
        url: nodeUrl,
        pid,
        running,
        crash,
      })),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
