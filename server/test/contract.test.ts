/**
 * Contract: the server's routes and the generated operation table agree. Every operation that is
 * not planned has a real handler on its method and path; every planned one answers 501
 * not_implemented after the same token and role checks a handler would get; no /api/v3 or
 * /authentication route exists outside the table (except the OpenAPI document built from it), and
 * the OpenAPI document marks exactly the planned operations. Every route's request validators and
 * response serialisers compile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { operations, type Operation } from '../../src/generated/api.ts';
import type { Role } from '../../src/generated/types.ts';
import { operationTableProblems, registeredOperations, urlOf } from '../src/platform/http/route.ts';
import { DEMO_ROLES } from '../src/seed/index.ts';
import { compilePending } from '../src/platform/http/compilers.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  login,
  type TestApp,
} from './support/helper.ts';

const allOps = Object.values(operations) as Operation[];
const plannedOps = allOps.filter((op) => op.planned);

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

/** A request for `op` with every path parameter filled in and a body of the right kind. */
function requestFor(op: Operation, token?: string): InjectOptions {
  const url = urlOf(op).replace(/:(\w+)/g, (_m, name: string) => `x-${name}`);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (op.body === 'json') {
    headers['content-type'] = 'application/json';
    return { method: op.method, url, headers, payload: '{}' };
  }
  if (op.body === 'form') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    return { method: op.method, url, headers, payload: '' };
  }
  return { method: op.method, url, headers };
}

describe('routes and the generated operation table', () => {
  let t: TestApp;
  const tokens = new Map<Role, string>();

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase());
    for (const role of DEMO_ROLES) tokens.set(role, await login(t.app, role));
  });
  afterAll(async () => t.close());

  it('compiles the validators and serialisers of every route (they compile lazily otherwise)', () => {
    // Throws the first schema that ajv or fast-json-stringify refuses.
    expect(() => compilePending()).not.toThrow();
    expect(compilePending()).toBe(0);
  });

  it('has planned and built operations in the table', () => {
    expect(plannedOps.length).toBeGreaterThan(0);
    expect(plannedOps.length).toBeLessThan(allOps.length);
  });

  it('registers every operation that is not planned with a real handler on its method and path', () => {
    const { handled } = registeredOperations(t.app);
    const missing = allOps
      .filter((op) => !op.planned)
      .filter(
        (op) =>
          !handled.has(op.key as keyof typeof operations) ||
          !t.app.hasRoute({ method: op.method, url: urlOf(op) }),
      )
      .map((op) => `${op.key} ${op.method} ${urlOf(op)}`);
    expect(missing).toEqual([]);
    const handledPlanned = plannedOps.filter((op) =>
      handled.has(op.key as keyof typeof operations),
    );
    expect(handledPlanned.map((op) => op.key)).toEqual([]);
  });

  it('registers every planned operation on its method and path', () => {
    const { planned } = registeredOperations(t.app);
    for (const op of plannedOps) {
      expect(t.app.hasRoute({ method: op.method, url: urlOf(op) }), op.key).toBe(true);
      expect(planned.has(op.key as keyof typeof operations), `${op.key} has no 501 route`).toBe(
        true,
      );
    }
  });

  it('answers 501 not_implemented for planned operations, only after the token and role checks', async () => {
    const { planned } = registeredOperations(t.app);
    let checked = 0;
    for (const op of plannedOps) {
      if (!planned.has(op.key as keyof typeof operations)) continue;
      const roles = t.app.access.rolesFor(op);
      if (roles === null) {
        const res = await t.app.inject(requestFor(op));
        expect(res.statusCode, `${op.key} (public)`).toBe(501);
        expectErrorShape(res.json(), 'not_implemented');
        expect(res.json()).toMatchObject({
          description_code: 'not_implemented',
          params: { operation: op.key },
        });
        checked++;
        continue;
      }
      const anonymous = await t.app.inject(requestFor(op));
      expect(anonymous.statusCode, `${op.key} without a token`).toBe(401);
      expectErrorShape(anonymous.json(), 'unauthorized');

      const allowed = DEMO_ROLES.find((role) => roles.includes(role));
      expect(allowed, `${op.key} allows no demo role`).toBeDefined();
      const res = await t.app.inject(requestFor(op, tokens.get(allowed as Role)));
      expect(res.statusCode, `${op.key} as ${String(allowed)}`).toBe(501);
      expectErrorShape(res.json(), 'not_implemented');
      expect(res.json()).toMatchObject({
        description_code: 'not_implemented',
        params: { operation: op.key },
      });

      const refused = DEMO_ROLES.find((role) => !roles.includes(role));
      if (refused) {
        const forbidden = await t.app.inject(requestFor(op, tokens.get(refused)));
        expect(forbidden.statusCode, `${op.key} as ${refused}`).toBe(403);
        expectErrorShape(forbidden.json(), 'forbidden');
      }
      checked++;
    }
    expect(checked).toBe(planned.size);
    expect(checked).toBeGreaterThan(0);
  });

  it('has no API route that the operation table does not declare', () => {
    const declared = new Set(allOps.map((op) => `${op.method} ${urlOf(op)}`));
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

  it('marks exactly the planned operations in the OpenAPI document, with their 501 answer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>();
    const marked: string[] = [];
    const unmarked: string[] = [];
    for (const item of Object.values(doc.paths).flatMap((p) => Object.values(p))) {
      const id = String(item.operationId);
      if (item['x-planned'] === true) {
        marked.push(id);
        expect(item.responses, id).toHaveProperty('501');
        expect(String(item.summary), id).toMatch(/not implemented/i);
      } else {
        unmarked.push(id);
        expect(item.responses, id).not.toHaveProperty('501');
      }
    }
    expect(marked.sort()).toEqual(plannedOps.map((op) => op.key).sort());
    expect(unmarked.sort()).toEqual(
      allOps
        .filter((op) => !op.planned)
        .map((op) => op.key)
        .sort(),
    );
  });
});

describe('operation table check at boot', () => {
  const ops = [
    { key: 'a.list', planned: false },
    { key: 'a.create', planned: true },
  ];

  it('accepts handlers for exactly the operations that are not planned', () => {
    expect(operationTableProblems(ops, new Set(['a.list']))).toEqual([]);
  });

  it('reports an operation that is neither handled nor planned', () => {
    expect(operationTableProblems(ops, new Set())).toEqual([
      'a.list has no handler and is not planned',
    ]);
  });

  it('reports a planned operation that has a handler, and a handler without an operation', () => {
    expect(operationTableProblems(ops, new Set(['a.list', 'a.create', 'b.show']))).toEqual([
      'a.create is planned in the schema but has a handler: drop "planned"',
      'b.show has a handler but no operation',
    ]);
  });
});
