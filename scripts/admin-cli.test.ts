// @vitest-environment node
/**
 * The admin command line (scripts/lib/admin-cli.ts) on a temporary DATA_DIR (embedded database):
 * it makes a category, a group and a user the server then finds with the given password, writes
 * audit entries as `cli`, and exits with 2 and one line on bad input. The commands run in this
 * process; the last test runs the real `npm run admin` entry as a child process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runAdmin } from './lib/admin-cli.ts';
import { openDatabase, type Database } from '../server/src/platform/db/client.ts';
import { verifyPassword } from '../server/src/platform/auth/passwords.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-admin-cli-'));

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  return env;
}

// The in-process commands share one open embedded database (each child process opens its own).
let shared: Promise<Database> | undefined;
const database = () => (shared ??= openDatabase({ dataDir, databaseUrl: undefined }));
async function closeDatabase() {
  const open = shared;
  shared = undefined;
  if (open) await (await open).close();
}

/** One command in this process: its exit code and what it wrote, as lines ending in \n. */
async function admin(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(args, {
    env: cliEnv(),
    database: await database(),
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
  });
  return { code, stdout, stderr };
}

/** One command through `npm run admin` as a child process. */
function npmRunAdmin(...args: string[]) {
  const res = spawnSync('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: ROOT,
    env: cliEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

afterAll(async () => {
  await closeDatabase();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('admin CLI', () => {
  it('adds a category, a group and a user who can log in', { timeout: 300_000 }, async () => {
    const cat = await admin('category', 'add', 'CLI school', '--description', 'made by the CLI');
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toContain('created category cli-school');
    const group = await admin('group', 'add', 'Pupils', '--category', 'cli-school');
    expect(group.code, group.stderr).toBe(0);
    const user = await admin(
      'user',
      'add',
      'alice',
      '--role',
      'user',
      '--group',
      'Pupils',
      '--name',
      'Alice',
      '--password',
      'Wonder-land-1',
    );
    expect(user.code, user.stderr).toBe(0);
    const generated = await admin('user', 'add', 'bob', '--role', 'advanced', '--group', 'Pupils');
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stdout).toMatch(/^password: \S{16,}$/m);
    const list = await admin('user', 'list');
    expect(list.stdout).toMatch(/^alice\tuser\tcli-school\tPupils\tactive$/m);
  });

  it('refuses bad input with exit code 2 and one line', { timeout: 300_000 }, async () => {
    for (const args of [
      ['user', 'add', 'carol', '--role', 'boss', '--group', 'Pupils'],
      [
        'user',
        'add',
        'alice',
        '--role',
        'user',
        '--group',
        'Pupils',
        '--password',
        'Wonder-land-2',
      ],
      ['user', 'add', 'dave', '--role', 'user', '--group', 'nope'],
      ['user', 'add', 'erin', '--role', 'user', '--group', 'Pupils', '--password', 'short'],
      ['frobnicate'],
      ['user', 'add', '--bogus'],
    ]) {
      const res = await admin(...args);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(/^admin: /);
    }
    expect((await admin('--help')).code).toBe(0);
  });

  it('wrote the rows and the audit entries as cli', { timeout: 120_000 }, async () => {
    const db = await database();
    try {
      const [alice] = await db.query<{ password_hash: string; category_id: string }>(
        "SELECT password_hash, category_id FROM users WHERE uid = 'alice'",
      );
      expect(alice?.category_id).toBe('cli-school');
      expect(await verifyPassword(alice?.password_hash, 'Wonder-land-1')).toBe(true);
      const audit = await db.query<{ actor_id: string; action: string }>(
        'SELECT actor_id, action FROM audit_log ORDER BY at',
      );
      expect(audit.map((a) => a.action)).toEqual([
        'adminCategories.create',
        'adminGroups.create',
        'adminUsers.create',
        'adminUsers.create',
      ]);
      expect(audit.every((a) => a.actor_id === 'cli')).toBe(true);
    } finally {
      // The child processes of the next test open the embedded database themselves.
      await closeDatabase();
    }
  });

  it(
    'runs as `npm run admin`: exit code 0 and the list on stdout, 2 and one line on stderr',
    { timeout: 300_000 },
    async () => {
      await closeDatabase();
      const list = npmRunAdmin('user', 'list');
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^alice\tuser\tcli-school\tPupils\tactive$/m);
      const bad = npmRunAdmin('frobnicate');
      expect(bad.code, bad.stderr).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/^admin: /);
    },
  );
});
