/**
 * Starts a private PostgreSQL cluster for tests and benchmarks: initdb + pg_ctl as the postgres
 * user in a temp dir (under a second), on a free loopback port. Returns its URL and a stop().
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryParent, onTmpfs } from './memory-tmpdir.mjs';

function pgBin(name) {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const v of versions)
      if (existsSync(join(root, v, 'bin', name))) return join(root, v, 'bin', name);
  }
  return name;
}

/** A TCP port free on the loopback interface now. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Where the cluster's directory goes: for `inMemory`, the temp dir when it is a tmpfs already (a
 * test run's), else /dev/shm when the machine lets a test run keep its files there; otherwise the
 * temp dir. In memory, a database copied from a template, and the cluster's removal at the end,
 * cost a third of the CPU time they cost on a disk (the journal, and the TRIM a `discard` mount
 * sends for each file).
 */
function clusterParent(inMemory) {
  if (!inMemory || onTmpfs(tmpdir())) return tmpdir();
  return memoryParent() ?? tmpdir();
}

/**
 * `inMemory`: a test run's throwaway cluster, kept in memory when the machine has a tmpfs with
 * room for it (benchmarks keep theirs on disk, as a portal's database is).
 */
export async function startPostgres({ inMemory = false } = {}) {
  const parent = clusterParent(inMemory);
  const dir = mkdtempSync(join(parent, 'vdi-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = process.getuid?.() === 0;
  const run = (bin, args) => {
    if (asPostgres)
      execFileSync(
        'su',
        ['postgres', '-s', '/bin/sh', '-c', [pgBin(bin), ...args].map((a) => `'${a}'`).join(' ')],
        { stdio: 'pipe' },
      );
    else execFileSync(pgBin(bin), args, { stdio: 'pipe' });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      'start',
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    inMemory: onTmpfs(dir),
    halt: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: start,
    stop: () => {
      try {
        // A halted cluster has nothing left to stop.
        if (existsSync(join(data, 'postmaster.pid')))
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
