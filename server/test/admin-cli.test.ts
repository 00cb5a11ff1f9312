/**
 * The admin command line (scripts/admin.ts) as a child process on a temporary DATA_DIR (embedded
 * database): it makes a category, a group and a user the server then finds with the given
 * password, writes audit entries as `cli`, and exits with 2 and one line on bad input.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/platform/db/client.ts';
import { verifyPassword } from '../src/platform/auth/passwords.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-admin-cli-'));

function admin(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  const res = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), ['scripts/admin.ts', ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('admin CLI', () => {
  it('adds a category, a group and a user who can log in', { timeout: 300_000 }, () => {
    const cat = admin('category', 'add', 'CLI school', '--description', 'made by the CLI');
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toContain('created category cli-school');
    const group = admin('group', 'add', 'Pupils', '--category', 'cli-school');
    expect(group.code, group.stderr).toBe(0);
    const user = admin(
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
    const generated = admin('user', 'add', 'bob', '--role', 'advanced', '--group', 'Pupils');
    expect(generated.code, generated.stderr).toBe(0);
    expect(generated.stdout).toMatch(/^password: \S{16,}$/m);
    const list = admin('user', 'list');
    expect(list.stdout).toMatch(/^alice\tuser\tcli-school\tPupils\tactive$/m);
  });

  it('refuses bad input with exit code 2 and one line', { timeout: 300_000 }, () => {
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
      const res = admin(...args);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(/^admin: /);
    }
    expect(admin('--help').code).toBe(0);
  });

  it('wrote the rows and the audit entries as cli', { timeout: 120_000 }, async () => {
    const database = await openDatabase({ dataDir, databaseUrl: undefined });
    try {
      const [alice] = await database.query<{ password_hash: string; category_id: string }>(
        "SELECT password_hash, category_id FROM users WHERE uid = 'alice'",
      );
      expect(alice?.category_id).toBe('cli-school');
      expect(await verifyPassword(alice?.password_hash, 'Wonder-land-1')).toBe(true);
      const audit = await database.query<{ actor_id: string; action: string }>(
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
      await database.close();
    }
  });
});
