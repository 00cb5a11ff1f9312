/**
 * Quotas: the applied quota is the user's, else the group's,
 * else the category's; `limits` inside a group or category quota cap the totals of that group or
 * category. Creating is allowed while used < quota; admins skip start quotas but not create quotas.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import type { Query } from '../../platform/db/client.ts';
import { desktopStates, role } from '../../../../src/generated/policy.ts';

/** Spec section 9 defaults when no quota applies. */
export const DEFAULT_HARDWARE_LIMITS = {
  memory: 128,
  vcpus: 128,
  desktops_disk_size: 500,
} as const;

export type QuotaObject = Partial<
  Record<
    | 'desktops'
    | 'volatile'
    | 'templates'
    | 'isos'
    | 'running'
    | 'vcpus'
    | 'memory'
    | 'desktops_disk_size'
    | 'total_size'
    | 'total_soft_size'
    | 'deployments_total'
    | 'deployment_desktops'
    | 'started_deployment_desktops',
    number
  >
> & { limits?: Partial<Record<string, number>> };

export type Restriction = 'user_quota' | 'group_quota' | 'category_quota';

export interface AppliedQuota {
  quota: QuotaObject | false;
  restriction_applied: Restriction;
  groupLimits: QuotaObject['limits'] | undefined;
  categoryLimits: QuotaObject['limits'] | undefined;
}

export interface QuotaSubject {
  userId: string;
  groupId: string;
  categoryId: string;
  role: string;
}

/** Running set (used for running/memory/vcpus counters). */
export const RUNNING_STATES = desktopStates.running;

const asQuota = (v: unknown): QuotaObject | null =>
  v && typeof v === 'object' ? (v as QuotaObject) : null;

export async function appliedQuota(query: Query, subject: QuotaSubject): Promise<AppliedQuota> {
  const rows = await query<{ uq: unknown; gq: unknown; cq: unknown }>(
    `SELECT u.quota AS uq, g.quota AS gq, c.quota AS cq FROM users u JOIN groups g ON g.id = u.group_id JOIN categories c ON c.id = u.category_id WHERE u.id = $1`,
    [subject.userId],
  );
  const row = rows[0];
  const uq = asQuota(row?.uq);
  const gq = asQuota(row?.gq);
  const cq = asQuota(row?.cq);
  const strip = (q: QuotaObject): QuotaObject => {
    const { limits: _limits, ...rest } = q;
    return rest;
  };
  const pick: [QuotaObject | null, Restriction][] = [
    [uq, 'user_quota'],
    [gq && Object.keys(strip(gq)).length ? gq : null, 'group_quota'],
    [cq && Object.keys(strip(cq)).length ? cq : null, 'category_quota'],
  ];
  const found = pick.find(([q]) => q);
  return {
    quota: found?.[0] ? strip(found[0]) : false,
    restriction_applied: found?.[1] ?? 'user_quota',
    groupLimits: gq?.limits,
    categoryLimits: cq?.limits,
  };
}

export interface Used {
  desktops: number;
  volatile: number;
  running: number;
  memory: number;
  vcpus: number;
}

const runningList = RUNNING_STATES.map((s) => `'${s}'`).join(',');

/** Usage counters of one scope (a user, or a whole group or category). */
export async function usedBy(
  query: Query,
  column: 'user_id' | 'group_id' | 'category_id',
  id: string,
): Promise<Used> {
  const rows = await query<{
    desktops: string;
    volatile: string;
    running: string;
    memory: string | null;
    vcpus: string | null;
  }>(
    `SELECT
       count(*) FILTER (WHERE type = 'persistent' AND tag IS NULL) AS desktops,
       count(*) FILTER (WHERE type = 'nonpersistent') AS volatile,
       count(*) FILTER (WHERE state IN (${runningList})) AS running,
       coalesce(sum((hardware->>'memory')::float) FILTER (WHERE state IN (${runningList})), 0) AS memory,
       coalesce(sum((hardware->>'vcpus')::int) FILTER (WHERE state IN (${runningList})), 0) AS vcpus
     FROM desktops WHERE ${column} = $1`,
    [id],
  );
  const r = rows[0];
  return {
    desktops: Number(r?.desktops ?? 0),
    volatile: Number(r?.volatile ?? 0),
    running: Number(r?.running ?? 0),
    memory: Number(r?.memory ?? 0),
    vcpus: Number(r?.vcpus ?? 0),
  };
}

const exceeded = (code: string, params: Record<string, unknown> = {}) =>
  new ApiError('precondition_required', `Quota exceeded: ${code}`, code, params);

/**
 * The transaction locks that serialise creates counted against the same quota or limits: one per
 * scope a create is checked at (the category, the group, the user), each in its own lock space.
 * They are always taken in that order, so two creates wait for each other at most once and never
 * in a cycle; held until the transaction ends, so a count and the insert it admits are atomic and
 * a limit with one unit left admits exactly one desktop, whoever the users are.
 */
const QUOTA_LOCKS = [
  [1, 'categoryId'],
  [2, 'groupId'],
  [3, 'userId'],
] as const;

/** Takes the quota locks of a subject; call inside the transaction that checks and inserts. */
export async function lockQuotaScopes(query: Query, subject: QuotaSubject): Promise<void> {
  for (const [space, key] of QUOTA_LOCKS)
    await query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [space, subject[key]]);
}

/** desktop_create / volatile_create: one more persistent or temporary desktop. */
export async function checkDesktopCreate(
  query: Query,
  subject: QuotaSubject,
  kind: 'desktops' | 'volatile',
): Promise<void> {
  const applied = await appliedQuota(query, subject);
  const used = await usedBy(query, 'user_id', subject.userId);
  const limit = applied.quota ? applied.quota[kind] : undefined;
  if (typeof limit === 'number' && used[kind] + 1 > limit)
    throw exceeded('desktop_new_user_quota_exceeded', { limit });
  if (kind === 'volatile') return; // limits have no volatile key: unlimited
  const g = applied.groupLimits?.desktops;
  if (typeof g === 'number' && (await usedBy(query, 'group_id', subject.groupId)).desktops + 1 > g)
    throw exceeded('desktop_new_group_limit_exceeded', { limit: g });
  const c = applied.categoryLimits?.desktops;
  if (
    typeof c === 'number' &&
    (await usedBy(query, 'category_id', subject.categoryId)).desktops + 1 > c
  )
    throw exceeded('desktop_new_category_limit_exceeded', { limit: c });
}

/**
 * Templates counted against a scope (a user, or a whole group or category): every template it
 * owns except failed ones (they hold no disk), enabled or not, being created included, so a
 * disabled template still uses its unit and a create waiting for its copy holds its unit too.
 */
export async function templatesUsedBy(
  query: Query,
  column: 'user_id' | 'group_id' | 'category_id',
  id: string,
): Promise<number> {
  const rows = await query<{ n: string }>(
    `SELECT count(*) AS n FROM templates WHERE ${column} = $1 AND status <> 'failed'`,
    [id],
  );
  return Number(rows[0]?.n ?? 0);
}

/** template_create: one more template for the subject, within its quota and its group and category limits. */
export async function checkTemplateCreate(query: Query, subject: QuotaSubject): Promise<void> {
  const applied = await appliedQuota(query, subject);
  const limit = applied.quota ? applied.quota.templates : undefined;
  if (
    typeof limit === 'number' &&
    (await templatesUsedBy(query, 'user_id', subject.userId)) + 1 > limit
  )
    throw exceeded('template_new_user_quota_exceeded', { limit });
  const g = applied.groupLimits?.templates;
  if (typeof g === 'number' && (await templatesUsedBy(query, 'group_id', subject.groupId)) + 1 > g)
    throw exceeded('template_new_group_limit_exceeded', { limit: g });
  const c = applied.categoryLimits?.templates;
  if (
    typeof c === 'number' &&
    (await templatesUsedBy(query, 'category_id', subject.categoryId)) + 1 > c
  )
    throw exceeded('template_new_category_limit_exceeded', { limit: c });
}

/**
 * The quota locks of several subjects at once (restoring items of several owners): every lock,
 * sorted by lock space and then by id, so this order never crosses the one lockQuotaScopes takes.
 */
export async function lockQuotaScopesOf(
  query: Query,
  subjects: readonly QuotaSubject[],
): Promise<void> {
  for (const [space, key] of QUOTA_LOCKS) {
    const ids = [...new Set(subjects.map((s) => s[key]))].sort();
    for (const id of ids)
      await query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [space, id]);
  }
}

/** desktop_start: running count, memory and vcpus of the running set (admins exempt). */
export async function checkDesktopStart(
  query: Query,
  subject: QuotaSubject,
  hw: { memory: number; vcpus: number },
): Promise<void> {
  if (subject.role === role.admin) return;
  const applied = await appliedQuota(query, subject);
  const scopes: [
    QuotaObject | Partial<Record<string, number>> | undefined | false,
    'user_id' | 'group_id' | 'category_id',
    string,
    string,
  ][] = [
    [applied.quota, 'user_id', subject.userId, 'user_quota'],
    [applied.groupLimits, 'group_id', subject.groupId, 'group_limit'],
    [applied.categoryLimits, 'category_id', subject.categoryId, 'category_limit'],
  ];
  for (const [q, column, id, scope] of scopes) {
    if (!q) continue;
    const used = await usedBy(query, column, id);
    const prefix =
      scope === 'user_quota' ? 'desktop_start' : `desktop_start_${scope.split('_')[0]}`;
    if (typeof q.running === 'number' && used.running + 1 > q.running)
      throw exceeded(
        scope === 'user_quota' ? 'desktop_start_user_quota_exceeded' : `${prefix}_limit_exceeded`,
        { limit: q.running },
      );
    if (typeof q.memory === 'number' && used.memory + hw.memory > q.memory)
      throw exceeded(
        scope === 'user_quota'
          ? 'desktop_start_memory_quota_exceeded'
          : `${prefix}_memory_limit_exceeded`,
        { limit: q.memory },
      );
    if (typeof q.vcpus === 'number' && used.vcpus + hw.vcpus > q.vcpus)
      throw exceeded(
        scope === 'user_quota'
          ? 'desktop_start_vcpu_quota_exceeded'
          : `${prefix}_vcpu_limit_exceeded`,
        { limit: q.vcpus },
      );
  }
}

/** The hardware limits a user may choose from (quota or the spec's defaults). */
export function hardwareLimits(applied: AppliedQuota): {
  memory: number;
  vcpus: number;
  desktops_disk_size: number;
} {
  const q = applied.quota || {};
  return {
    memory: q.memory ?? DEFAULT_HARDWARE_LIMITS.memory,
    vcpus: q.vcpus ?? DEFAULT_HARDWARE_LIMITS.vcpus,
    desktops_disk_size: q.desktops_disk_size ?? DEFAULT_HARDWARE_LIMITS.desktops_disk_size,
  };
}

/** Refuses hardware above the user's limits (400 with the offending field). */
export function assertHardwareWithin(
  limits: ReturnType<typeof hardwareLimits>,
  hw: { memory?: number | undefined; vcpus?: number | undefined; disk_size?: number | undefined },
): void {
  const over: [string, number | undefined, number][] = [
    ['memory', hw.memory, limits.memory],
    ['vcpus', hw.vcpus, limits.vcpus],
    ['disk_size', hw.disk_size, limits.desktops_disk_size],
  ];
  for (const [field, value, max] of over) {
    if (typeof value === 'number' && value > max)
      throw new ApiError(
        'bad_request',
        `hardware.${field} is above the allowed ${max}`,
        'hardware_not_allowed',
        { field, max },
        { errors: { [`/hardware/${field}`]: 'maximum' } },
      );
  }
}
