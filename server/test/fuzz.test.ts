/**
 * Fuzz suite generated from the operation table (src/generated/api.ts): every operation, planned
 * ones included, gets hostile path parameters, hostile query parameters, hostile bodies built
 * from its request schema, malformed bodies and wrong content types, from three callers: nobody
 * (no token), the owner of the target objects, and another account of the same role. The role is
 * the least privileged one the operation admits (`user` for public operations).
 *
 * Rules (support/fuzz/oracle.ts): no 5xx except 501 from planned operations and 503
 * service_unavailable; every error answer in our error shape; no anonymous call past the token
 * gate; no 2xx to input the server must refuse (support/fuzz/cases.ts: schema-invalid values, NUL,
 * lone surrogates, nesting of 40 levels or more, ids of another user's objects, wrong content
 * types), nor to another user's object. All violations are collected and reported together.
 *
 * Targets are made fresh for every operation that is built (support/fuzz/fixtures.ts): a
 * destructive call that wrongly succeeds never takes a target from the next operation. Desktops
 * have no disk and templates a disk that does not exist, so no virtual machine boots whatever the
 * server answers; the run fails if more than MAX_REAL_STARTS are running at the end, and stops them
 * all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { operations, type Operation } from '../../src/generated/api.ts';
import { resourceOf } from '../../src/generated/resources.ts';
import type { Role } from '../../src/generated/types.ts';
import { storage } from '../src/platform/db/schema.ts';
import { API_BASE, AUTH_BASE } from '../src/platform/http/route.ts';
import { DEMO_ROLES } from '../src/seed/index.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  signWithWrongKey,
  unsignedToken,
  type TestApp,
} from './support/helper.ts';
import {
  casesFor,
  sampled,
  type CaseContext,
  type ForeignId,
  type FuzzCase,
} from './support/fuzz/cases.ts';
import {
  addAccount,
  FIXTURE_KINDS,
  Targets,
  type Account,
  type FixtureKind,
} from './support/fuzz/fixtures.ts';
import { judge, type Answer, type CallerName } from './support/fuzz/oracle.ts';
import {
  isIdSite,
  sample,
  schemaOfType,
  sitesOf,
  type PathSegment,
} from './support/fuzz/schema-walk.ts';

/** Requests in flight at once. */
const BATCH = 16;
/** An answer slower than this is a failure (a hang would otherwise eat the whole budget). */
const ANSWER_TIMEOUT_MS = 10_000;
/** Violation lines in the failure message. */
const MAX_LINES = 50;
/** Virtual machines the run may leave running (starts on real QEMU are slow). */
const MAX_REAL_STARTS = 2;

const allOps: Operation[] = Object.values(operations).sort((a, b) => a.key.localeCompare(b.key));

/** Least privileged first. */
const ROLE_ORDER: readonly Role[] = [...DEMO_ROLES].reverse();

const ID_NAME = /^(id|.*_id|.*Id)$/;

/** Which kind of object an id names, from the names on its way, else from the operation's resource. */
const KIND_HINTS: readonly [RegExp, FixtureKind][] = [
  [/template/i, 'templates'],
  [/flopp/i, 'floppies'],
  [/iso|media/i, 'media'],
  [/recycle/i, 'recycleBin'],
  [/desktop|domain/i, 'desktops'],
];

function kindFor(op: Operation, names: readonly PathSegment[]): FixtureKind {
  const words = names.filter((n): n is string => typeof n === 'string');
  for (const [pattern, kind] of KIND_HINTS) if (words.some((w) => pattern.test(w))) return kind;
  const entity = resourceOf(op.resource)?.meta.types.list;
  const stored = Object.entries(storage).find(([, s]) => s.entity === entity)?.[0];
  return FIXTURE_KINDS.find((k) => k === stored) ?? 'desktops';
}

const FOREIGN_LABELS: Record<FixtureKind, string> = {
  desktops: "other user's desktop",
  media: "other user's ISO",
  floppies: "other user's floppy",
  templates: "other user's template",
  recycleBin: "other user's recycle-bin entry",
};

interface Violation {
  cause: string;
  op: string;
  caller: CallerName;
  kind: string;
  line: string;
}

let t: TestApp;
const owners = new Map<Role, Account>();
const others = new Map<Role, Account>();
/** Authorization headers that must not pass for anybody, per role of the account they imitate. */
const forgedHeaders = new Map<Role, { label: string; header: string }[]>();

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  // The bastion on, custom domains included, so its handlers meet the hostile input (not only
  // the refusal of a portal without it); no CNAME record exists, without asking a real resolver.
  await t.app.settings.set('bastion', {
    enabled: true,
    domain: 'bastion.fuzz.test',
    ssh_port: null,
    individual_domains: true,
  });
  t.app.bastion.resolveCname = () =>
    Promise.reject(Object.assign(new Error('no record'), { code: 'ENOTFOUND' }));
  const roles = new Set(allOps.map((op) => lowestRole(t.app.access.rolesFor(op))));
  for (const role of roles) {
    const demo = await t.app.users.findLocal(role, 'default');
    if (!demo) throw new Error(`fuzz: no demo account ${role}`);
    owners.set(role, {
      id: demo.id,
      username: role,
      role,
      categoryId: demo.categoryId,
      groupId: demo.groupId,
      token: await login(t.app, role),
    });
    const other = await addAccount(t.app, role, `fuzz-other-${role}`);
    others.set(role, { ...other, token: await login(t.app, other.username) });
    const claims = decodePayload(owners.get(role)?.token ?? '');
    forgedHeaders.set(role, [
      { label: 'a token that is no JWT', header: 'Bearer not-a-jwt' },
      { label: 'an unsigned alg:none token', header: `Bearer ${unsignedToken(claims)}` },
      {
        label: 'a token signed with another key',
        header: `Bearer ${await signWithWrongKey(claims)}`,
      },
      { label: 'a 10 kB token', header: `Bearer ${'a'.repeat(10_240)}` },
      {
        label: 'Basic credentials',
        header: `Basic ${Buffer.from(`${role}:x`).toString('base64')}`,
      },
    ]);
  }
});
afterAll(async () => {
  // Virtual machines outlive the app (a restarted server adopts them): stop any that started.
  for (const vm of await t.app.hypervisor.list())
    await t.app.hypervisor.stop(vm.id).catch(() => undefined);
  await t.close();
});

function lowestRole(roles: readonly Role[] | null): Role {
  return ROLE_ORDER.find((r) => !roles || roles.includes(r)) ?? 'user';
}

let addressSerial = 0;
/** A new client address per request: the per-address login throttle never mixes cases. */
function nextAddress(): string {
  const n = ++addressSerial;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

async function send(op: Operation, c: FuzzCase, token: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (c.contentType) headers['content-type'] = c.contentType;
  const authorization = c.authorization ?? (token ? `Bearer ${token}` : undefined);
  if (authorization) headers.authorization = authorization;
  const options: InjectOptions = {
    method: op.method,
    url: c.url,
    headers,
    remoteAddress: nextAddress(),
    ...(c.payload !== undefined ? { payload: c.payload } : {}),
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Answer>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 0, body: `no answer within ${ANSWER_TIMEOUT_MS} ms` }),
      ANSWER_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      t.app.inject(options).then((res) => ({
        status: res.statusCode,
        body: res.body,
        location: typeof res.headers.location === 'string' ? res.headers.location : undefined,
        cookies: String(res.headers['set-cookie'] ?? ''),
      })),
      timeout,
    ]);
  } catch (err) {
    return { status: 0, body: `inject failed: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

const excerpt = (text: string) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
};

/** Sessions a call ended (logout) are opened again, throttle counters are cleared. */
async function restoreAccounts(accounts: readonly Account[]): Promise<void> {
  await t.app.database.query('DELETE FROM login_attempts');
  const check: Operation = operations['session.user'];
  for (const account of accounts) {
    const res = await injectWithToken(t.app, account.token, {
      method: check.method,
      url: `${API_BASE}${check.path}`,
    });
    if (res.statusCode === 401) account.token = await login(t.app, account.username);
  }
}

/** Targets shared by the planned operations (their handler never runs). */
const plannedTargets = new Map<string, Record<FixtureKind, string>>();

async function targetsOf(op: Operation, account: Account): Promise<Record<FixtureKind, string>> {
  if (!op.planned) return new Targets(t.app, account).all();
  const known = plannedTargets.get(account.username);
  if (known) return known;
  const made = await new Targets(t.app, account).all();
  plannedTargets.set(account.username, made);
  return made;
}

function needsTargets(op: Operation): boolean {
  if (op.path.includes('{')) return true;
  return op.request !== null && sitesOf(schemaOfType(op.request)).some(isIdSite);
}

async function contextOf(op: Operation, owner: Account, other: Account): Promise<CaseContext> {
  const targets = needsTargets(op);
  const mine = targets ? await targetsOf(op, owner) : undefined;
  const theirs = targets ? await targetsOf(op, other) : undefined;
  const referenceOf = (path: readonly PathSegment[]) =>
    mine?.[kindFor(op, path)] ?? 'fuzz-reference';
  const foreign: ForeignId[] = theirs
    ? FIXTURE_KINDS.map((kind) => ({ label: FOREIGN_LABELS[kind], id: theirs[kind] }))
    : [];
  const paramSchema = op.params ? schemaOfType(op.params) : undefined;
  const paramSites = paramSchema ? sitesOf(paramSchema, 1) : [];
  const params: Record<string, string> = {};
  const idParams = new Set<string>();
  for (const [, name = ''] of op.path.matchAll(/\{(\w+)\}/g)) {
    const site = paramSites.find((s) => s.key === name);
    if (site ? isIdSite(site) : ID_NAME.test(name)) {
      idParams.add(name);
      params[name] = referenceOf([name]);
    } else {
      params[name] = site ? String(sample(site.node, referenceOf, [name], name)) : 'fuzz';
    }
  }
  return {
    op,
    prefix: op.base === 'auth' ? AUTH_BASE : API_BASE,
    params,
    idParams,
    foreign,
    referenceOf,
  };
}

describe('fuzz: every operation of the table with hostile input', () => {
  it('answers hostile requests without a server error, in our error shape, and never accepts them', async () => {
    const started = Date.now();
    const violations: Violation[] = [];
    const callersPerOp = new Map<string, Set<CallerName>>();
    const statuses = new Map<string, Map<string, number>>();
    let requests = 0;

    for (const op of allOps) {
      const roles = t.app.access.rolesFor(op);
      const isPublic = roles === null;
      const role = lowestRole(roles);
      const owner = owners.get(role);
      const other = others.get(role);
      if (!owner || !other) throw new Error(`fuzz: no accounts for role ${role}`);
      const ctx = await contextOf(op, owner, other);
      const { hostile, valid } = casesFor(ctx);
      // Another user may reach the valid request only when it names no object of the owner.
      const foreignAccess = !isPublic && ctx.idParams.size > 0 ? [valid] : [];
      // The other account's own objects are the owner's "foreign ids": not hostile from its side.
      const notOwn = (cases: FuzzCase[]) => cases.filter((c) => c.kind !== 'foreign');
      const anonymousValid = isPublic ? [] : [valid];
      // The valid request with a forged or malformed token is an anonymous call.
      const forged = (forgedHeaders.get(role) ?? []).map(({ label, header }): FuzzCase => ({
        ...valid,
        group: 'request',
        kind: 'bad-token',
        label: `valid request with ${label}`,
        expect: isPublic ? 'survive' : 'reject',
        authorization: header,
      }));
      const plan: [CallerName, FuzzCase[]][] = op.planned
        ? [
            ['owner', sampled(hostile, 10)],
            ['other', [...notOwn(sampled(hostile, 10)), ...foreignAccess]],
            ['anonymous', [...sampled(hostile, 10), ...anonymousValid, ...forged]],
          ]
        : [
            ['owner', hostile],
            [
              'other',
              [...notOwn(sampled(hostile, 5, ['path', 'query', 'request'])), ...foreignAccess],
            ],
            [
              'anonymous',
              [...sampled(hostile, 5, ['path', 'query', 'request']), ...anonymousValid, ...forged],
            ],
          ];
      let count = 0;
      for (const [caller, cases] of plan) {
        const token =
          caller === 'owner' ? owner.token : caller === 'other' ? other.token : undefined;
        for (let i = 0; i < cases.length; i += BATCH) {
          const batch = cases.slice(i, i + BATCH);
          const answers = await Promise.all(batch.map((c) => send(op, c, token)));
          batch.forEach((c, j) => {
            const answer = answers[j] ?? { status: 0, body: 'no answer' };
            const seen = statuses.get(op.key) ?? new Map<string, number>();
            const key = `${caller}:${answer.status}`;
            seen.set(key, (seen.get(key) ?? 0) + 1);
            statuses.set(op.key, seen);
            if (process.env.FUZZ_REPORT && answer.status >= 200 && answer.status < 300)
              console.info(`fuzz 2xx: ${op.key} ${caller} ${c.label} → ${answer.status}`);
            const verdict =
              answer.status === 0 ? { cause: answer.body } : judge(op, isPublic, caller, c, answer);
            if (verdict)
              violations.push({
                cause: verdict.cause,
                op: op.key,
                caller,
                kind: `${c.group}/${c.kind}`,
                line: `${op.method} ${ctx.prefix}${op.path} ${caller} ${c.label} → ${answer.status} ${excerpt(answer.body)}`,
              });
          });
          count += batch.length;
        }
      }
      requests += count;
      callersPerOp.set(op.key, new Set(plan.filter(([, cases]) => cases.length).map(([c]) => c)));
      await restoreAccounts([owner, other]);
    }

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.info(
      `fuzz: ${requests} requests over ${allOps.length} operations in ${seconds} s, ${violations.length} violations`,
    );
    if (process.env.FUZZ_REPORT)
      for (const [key, seen] of statuses)
        console.info(`fuzz statuses ${key}: ${[...seen].map(([k, n]) => `${k}×${n}`).join(' ')}`);
    if (process.env.FUZZ_REPORT)
      for (const v of violations) console.info(`fuzz violation: [${v.cause}] ${v.line}`);

    // Targets can not boot (fixtures.ts): a running virtual machine means one was started anyway.
    const running = (await t.app.hypervisor.list()).map((vm) => vm.id);
    expect(running.length, `virtual machines started: ${running.join(', ')}`).toBeLessThanOrEqual(
      MAX_REAL_STARTS,
    );
    // Every operation of the table was exercised by all three callers.
    expect(
      allOps.filter((op) => (callersPerOp.get(op.key)?.size ?? 0) < 3).map((op) => op.key),
    ).toEqual([]);
    expect(violations.length, report(violations, requests)).toBe(0);
    // Every operation of the table in one test: its time grows with the table.
  }, 240_000);
});

/**
 * The failure message: one line per group of violations (cause, case family), then up to
 * MAX_LINES single violations, the first of each (cause, operation, family) before the rest.
 */
function report(violations: readonly Violation[], requests: number): string {
  const groups = new Map<string, { count: number; ops: Set<string> }>();
  for (const v of violations) {
    const key = `${v.cause} | ${v.kind}`;
    const g = groups.get(key) ?? { count: 0, ops: new Set<string>() };
    g.count++;
    g.ops.add(v.op);
    groups.set(key, g);
  }
  const seen = new Set<string>();
  const firsts: Violation[] = [];
  const rest: Violation[] = [];
  for (const v of violations) {
    const key = `${v.cause}|${v.op}|${v.kind}`;
    (seen.has(key) ? rest : firsts).push(v);
    seen.add(key);
  }
  const lines = [...firsts, ...rest].slice(0, MAX_LINES).map((v) => `  ${v.line}`);
  return [
    `${violations.length} violations in ${requests} requests (FUZZ_REPORT=1 prints them all).`,
    'By cause and case family:',
    ...[...groups].map(([key, g]) => `  ${key}: ${g.count} on ${g.ops.size} operations`),
    `Violations (${lines.length} of ${violations.length}):`,
    ...lines,
  ].join('\n');
}
