/**
 * The rules of a migration: what an origin owns that moves, the account rules (the first one
 * broken is the answer), the quota codes the items would break in the target's quota, and the
 * name a moved desktop takes among the target's.
 */
import type { FastifyInstance } from 'fastify';
import { and, eq, isNull, ne } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Query } from '../../platform/db/client.ts';
import {
  deployments,
  desktops,
  media,
  templates,
  type DesktopRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { appliedQuota, templatesUsedBy, usedBy, type QuotaSubject, GIB } from '../quotas/index.ts';
import { desktopStates, hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import type { ProfileMigrationItem } from '../../../../src/generated/types.ts';

/** States a desktop may be moved in: those it may be edited in. */
export const MOVABLE_STATES: readonly DesktopRow['state'][] = desktopStates.editable;

const DESKTOP_NAME_MAX = 50;

export type Status = 'exported' | 'imported' | 'migrating' | 'migrated' | 'failed' | 'revoked';

export interface MigrationRow {
  id: string;
  origin_user_id: string;
  target_user_id: string | null;
  token_jti: string;
  status: Status;
  expires_at: Date | string;
}

/** What an origin owns that a migration moves. */
export interface OwnedItems {
  desktops: (ProfileMigrationItem & { persistent: boolean })[];
  templates: ProfileMigrationItem[];
  media: ProfileMigrationItem[];
  deployments: ProfileMigrationItem[];
}

export const asDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));

export const broken = (code: string, description: string) =>
  new ApiError('precondition_required', description, code);

export const subjectOf = (u: UserRow): QuotaSubject => ({
  userId: u.id,
  groupId: u.groupId,
  categoryId: u.categoryId,
  role: u.role,
});

/** The name a moved desktop takes among the target's names: its own, else `<name> (n)`. */
export function freeDesktopName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name.trim())) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = name.trim().slice(0, DESKTOP_NAME_MAX - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

export async function ownedItems(on: Executor, userId: string): Promise<OwnedItems> {
  // One read after the other: `on` may be a transaction, whose one connection takes one query at
  // a time.
  const d = await on
    .select({ id: desktops.id, name: desktops.name, type: desktops.type })
    .from(desktops)
    .where(and(eq(desktops.userId, userId), isNull(desktops.tag)))
    .orderBy(desktops.name, desktops.id);
  const t = await on
    .select({ id: templates.id, name: templates.name })
    .from(templates)
    .where(eq(templates.userId, userId))
    .orderBy(templates.name, templates.id);
  const m = await on
    .select({ id: media.id, name: media.name, kind: media.kind })
    .from(media)
    .where(and(eq(media.userId, userId), ne(media.status, 'deleted')))
    .orderBy(media.name, media.id);
  const p = await on
    .select({ id: deployments.id, name: deployments.name })
    .from(deployments)
    .where(eq(deployments.userId, userId))
    .orderBy(deployments.name, deployments.id);
  return {
    desktops: d.map((r) => ({
      id: r.id,
      name: r.name,
      kind: r.type,
      persistent: r.type === 'persistent',
    })),
    templates: t,
    media: m.map((r) => ({ id: r.id, name: r.name, kind: r.kind })),
    deployments: p,
  };
}

export const isEmpty = (items: OwnedItems) =>
  items.desktops.length + items.templates.length + items.media.length + items.deployments.length ===
  0;

/** The account rules, in order: the code of the first one broken, or null. */
export function ruleBroken(origin: UserRow, target: UserRow, items: OwnedItems): string | null {
  if (origin.id === target.id) return 'same_user_migration';
  if (origin.categoryId !== target.categoryId) return 'different_category_migration';
  if (hasRoleAtLeast(origin.role, role.admin) && !hasRoleAtLeast(target.role, role.admin))
    return 'role_migration_admin';
  const ownsShared = items.templates.length + items.media.length + items.deployments.length > 0;
  if (
    hasRoleAtLeast(origin.role, role.advanced) &&
    ownsShared &&
    !hasRoleAtLeast(target.role, role.advanced)
  )
    return 'role_migration_user';
  return null;
}

/** The quota codes the items would break in the target's quota (empty when they fit). */
export async function quotaErrors(
  app: FastifyInstance,
  query: Query,
  on: Executor,
  target: UserRow,
  originId: string,
  items: OwnedItems,
): Promise<string[]> {
  const applied = await appliedQuota(query, subjectOf(target));
  const quota = applied.quota;
  if (!quota) return [];
  const errors: string[] = [];
  const persistent = items.desktops.filter((d) => d.persistent).length;
  if (
    persistent > 0 &&
    typeof quota.desktops === 'number' &&
    (await usedBy(query, 'user_id', target.id)).desktops + persistent > quota.desktops
  )
    errors.push('migration_desktop_quota_error');
  if (
    items.templates.length > 0 &&
    typeof quota.templates === 'number' &&
    (await templatesUsedBy(query, 'user_id', target.id)) +
      (await templatesUsedBy(query, 'user_id', originId)) >
      quota.templates
  )
    errors.push('migration_template_quota_error');
  if (items.media.length > 0) {
    const mediaSize: unknown = Reflect.get(quota, 'media_size');
    const mine = await app.mediaUsage.usage('user_id', target.id, on);
    const theirs = await app.mediaUsage.usage('user_id', originId, on);
    if (
      (typeof quota.isos === 'number' && mine.count + theirs.count > quota.isos) ||
      (typeof mediaSize === 'number' && mine.bytes + theirs.bytes > mediaSize * GIB)
    )
      errors.push('migration_media_quota_error');
  }
  if (items.deployments.length > 0 && typeof quota.deployments_total === 'number') {
    const rows = await query<{ n: string }>(
      'SELECT count(*) AS n FROM deployments WHERE user_id = $1',
      [target.id],
    );
    if (Number(rows[0]?.n ?? 0) + items.deployments.length > quota.deployments_total)
      errors.push('migration_deployments_quota_error');
  }
  return errors;
}
