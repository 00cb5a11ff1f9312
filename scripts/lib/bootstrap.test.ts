// @vitest-environment node
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installedAsLocked } from './bootstrap.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A lock file and npm's record of what it installed, in a temp folder; returns both paths. */
function files(locked: object, installed: object): [string, string] {
  const dir = mkdtempSync(join(tmpdir(), 'vdi-bootstrap-'));
  dirs.push(dir);
  const lock = join(dir, 'package-lock.json');
  const stamp = join(dir, '.package-lock.json');
  writeFileSync(lock, JSON.stringify({ lockfileVersion: 3, packages: locked }));
  writeFileSync(stamp, JSON.stringify({ lockfileVersion: 3, packages: installed }));
  return [lock, stamp];
}

const root = { '': { name: 'portal', version: '0.1.0' } };

describe('node_modules against the lock file', () => {
  it('is up to date when every package is installed at its locked version', () => {
    const packages = {
      'node_modules/a': { version: '1.0.0' },
      'node_modules/b': { version: '2.1.0' },
    };
    expect(installedAsLocked(...files({ ...root, ...packages }, packages))).toBe(true);
  });

  it('is up to date without an optional package this platform does not install', () => {
    const installed = { 'node_modules/a': { version: '1.0.0' } };
    const locked = {
      ...root,
      ...installed,
      'node_modules/@scope/binary-darwin': { version: '3.0.0', optional: true },
    };
    expect(installedAsLocked(...files(locked, installed))).toBe(true);
  });

  it('is stale when a package is installed at another version', () => {
    expect(
      installedAsLocked(
        ...files(
          { ...root, 'node_modules/a': { version: '1.1.0' } },
          { 'node_modules/a': { version: '1.0.0' } },
        ),
      ),
    ).toBe(false);
  });

  it('is stale when the lock file adds a package', () => {
    const installed = { 'node_modules/a': { version: '1.0.0' } };
    expect(
      installedAsLocked(
        ...files({ ...root, ...installed, 'node_modules/new': { version: '0.1.0' } }, installed),
      ),
    ).toBe(false);
  });

  it('is stale when either file cannot be read', () => {
    expect(
      installedAsLocked('/nonexistent/package-lock.json', '/nonexistent/.package-lock.json'),
    ).toBe(false);
  });
});
