/**
 * Contract: the server's routes and the generated operation table agree. Every operation of the
 * resources this server implements has a route with the same method and path, and no /api/v3 or
 * /authentication route exists outside the table (except the OpenAPI document built from it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/generated/api.ts';
import { urlOf } from '../src/lib/route.ts';
import { buildTestApp, createTestDatabase, type TestApp } from './helper.ts';

/** Resources whose every operation the server implements today (others come with their issues). */
const IMPLEMENTED = ['session', 'config', 'desktops', 'recycle-bins'] as const;
/** Account flows by email (need SMTP) come with the profile/password issue. */
const PENDING = new Set([
  'session.forgotPassword',
  'session.requestEmailVerification',
  'session.resetPassword',
  'session.verifyEmail',
]);

/** The router prints sibling params with different names as `:a|:b`: expand to every alternative. */
function expand(url: string): string[] {
  return url
    .split('/')
    .slice(1)
    .reduce<string[]>(
      (acc, seg) => acc.flatMap((prefix) => seg.split('|').map((alt) => `${prefix}/${alt}`)),
      [''],
    );
}

describe('routes and the generated operation table', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase());
  });
  afterAll(async () => t.close());

  it('registers every operation of the implemented resources with its method and path', () => {
    const missing = Object.values(operations)
      .filter(
        (op) => (IMPLEMENTED as readonly string[]).includes(op.resource) && !PENDING.has(op.key),
      )
      .filter((op) => !t.app.hasRoute({ method: op.method, url: urlOf(op) }))
      .map((op) => `${op.key} ${op.method} ${urlOf(op)}`);
    expect(missing.join('\n')).toBe('');
  });

  it('has no API route that the operation table does not declare', () => {
    const declared = new Set(Object.values(operations).map((op) => `${op.method} ${urlOf(op)}`));
    const extra: string[] = [];
    // printRoutes lists one route per line: "├── /api/v3/user (GET, HEAD)"
    for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /(\/\S*) \(([A-Z, ]+)\)$/.exec(line);
      const url = m?.[1];
      if (
        !url ||
        !m[2] ||
        !/^\/(api\/v3|authentication)\//.test(url) ||
        url === '/api/v3/openapi.json'
      )
        continue;
      for (const method of m[2].split(', ')) {
        if (method !== 'HEAD' && !expand(url).some((u) => declared.has(`${method} ${u}`)))
          extra.push(`${method} ${url}`);
      }
    }
    expect(extra.join('\n')).toBe('');
    expect(declared.size).toBeGreaterThan(100);
  });
});
