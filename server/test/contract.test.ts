/**
 * Contract: the server's routes and the generated operation table agree. No operation is left
 * planned (the table's 501 answer is for work not built yet, and none is left); every operation
 * has a real handler on its method and path; no /api/v3 or /authentication route exists outside
 * the table (except the OpenAPI document built from it), and the OpenAPI document marks no
 * operation as planned. Every route's request validators and response serialisers compile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type Operation } from '../../src/generated/api.ts';
import { operationTableProblems, registeredOperations, urlOf } from '../src/platform/http/route.ts';
import { compilePending } from '../src/platform/http/compilers.ts';
import { buildTestApp, createTestDatabase, type TestApp } from './support/helper.ts';

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

describe('routes and the generated operation table', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase());
  });
  afterAll(async () => t.close());

  it('compiles the validators and serialisers of every route (they compile lazily otherwise)', () => {
    // Throws the first schema that ajv or fast-json-stringify refuses.
    expect(() => compilePending()).not.toThrow();
    expect(compilePending()).toBe(0);
  });

  it('builds every operation of the table: none is left planned', () => {
    // A planned operation answers 501: a screen or a client reaching one meets unfinished work.
    expect(plannedOps.map((op) => op.key)).toEqual([]);
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
