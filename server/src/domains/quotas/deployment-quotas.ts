/**
 * Deployment quotas of the owner: one more deployment within `deployments_total` (and the
 * `deployments_total` limits of the owner's group and category), and the new desktops within
 * `deployment_desktops` (desktops of the deployments the owner owns). Checked inside the
 * transaction that inserts, under the owner's quota locks.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import type { Query } from '../../platform/db/client.ts';
import { appliedQuota, RUNNING_STATES, type QuotaSubject } from './quotas.ts';

const exceeded = (code: string, params: Record<string, unknown> = {}) =>
  new ApiError('precondition_required', `Quota exceeded: ${code}`, code, params);

async function count(query: Query, sqlText: string, id: string): Promise<number> {
  const rows = await query<{ n: string }>(sqlText, [id]);
  return Number(rows[0]?.n ?? 0);
}

const DEPLOYMENTS_OF = {
  user_id: 'SELECT count(*) AS n FROM deployments WHERE user_id = $1',
  group_id: 'SELECT count(*) AS n FROM deployments WHERE group_id = $1',
  category_id: 'SELECT count(*) AS n FROM deployments WHERE category_id = $1',
} as const;

const DEPLOYMENT_DESKTOPS_OF_OWNER =
  'SELECT count(*) AS n FROM desktops d JOIN deployments p ON p.id = d.tag WHERE p.user_id = $1';

/** What the owner's deployments use: deployments, their desktops, and those running. */
export async function deploymentUsage(
  query: Query,
  userId: string,
): Promise<{ total: number; desktops: number; started: number }> {
  const [deployments, desktops, started] = await Promise.all([
    count(query, DEPLOYMENTS_OF.user_id, userId),
    count(query, DEPLOYMENT_DESKTOPS_OF_OWNER, userId),
    query<{ n: string }>(`${DEPLOYMENT_DESKTOPS_OF_OWNER} AND d.state = ANY($2::text[])`, [
      userId,
      [...RUNNING_STATES],
    ]).then((rows) => Number(rows[0]?.n ?? 0)),
  ]);
  return { total: deployments, desktops, started };
}

/**
 * `newDeployment`: one more deployment is made; `desktops`: how many desktops are added to the
 * owner's deployments.
 */
export async function checkDeploymentQuota(
  query: Query,
  owner: QuotaSubject,
  change: { newDeployment: boolean; desktops: number },
): Promise<void> {
  const applied = await appliedQuota(query, owner);
  const quota = applied.quota || {};
  if (change.newDeployment) {
    const limit = quota.deployments_total;
    if (
      typeof limit === 'number' &&
      (await count(query, DEPLOYMENTS_OF.user_id, owner.userId)) + 1 > limit
    )
      throw exceeded('deployment_new_user_quota_exceeded', { limit });
    const g = applied.groupLimits?.deployments_total;
    if (
      typeof g === 'number' &&
      (await count(query, DEPLOYMENTS_OF.group_id, owner.groupId)) + 1 > g
    )
      throw exceeded('deployment_new_group_quota_exceeded', { limit: g });
    const c = applied.categoryLimits?.deployments_total;
    if (
      typeof c === 'number' &&
      (await count(query, DEPLOYMENTS_OF.category_id, owner.categoryId)) + 1 > c
    )
      throw exceeded('deployment_new_category_quota_exceeded', { limit: c });
  }
  const limit = quota.deployment_desktops;
  if (
    change.desktops > 0 &&
    typeof limit === 'number' &&
    (await count(query, DEPLOYMENT_DESKTOPS_OF_OWNER, owner.userId)) + change.desktops > limit
  )
    throw exceeded('deployment_desktop_new_user_quota_exceeded', { limit });
}

/**
 * The desktop limits of the groups and categories a new deployment's desktops go to: for each
 * target group (category) whose quota has `limits.desktops`, the persistent desktops it holds
 * (deployment desktops included) plus the new desktops of its users may not pass the limit.
 */
export async function checkTargetDesktopLimits(
  query: Query,
  targets: readonly { groupId: string; categoryId: string }[],
): Promise<void> {
  const scopes = [
    {
      table: 'groups',
      column: 'group_id',
      key: 'groupId',
      code: 'desktop_new_group_limit_exceeded',
      param: 'group',
    },
    {
      table: 'categories',
      column: 'category_id',
      key: 'categoryId',
      code: 'desktop_new_category_limit_exceeded',
      param: 'category',
    },
  ] as const;
  for (const scope of scopes) {
    const adding = new Map<string, number>();
    for (const target of targets)
      adding.set(target[scope.key], (adding.get(target[scope.key]) ?? 0) + 1);
    if (adding.size === 0) continue;
    for (const id of adding.keys()) {
      const [row] = await query<{ id: string; quota: unknown }>(
        `SELECT id, quota FROM ${scope.table} WHERE id = $1`,
        [id],
      );
      if (!row) continue;
      const limit = (row.quota as { limits?: { desktops?: unknown } } | null)?.limits?.desktops;
      if (typeof limit !== 'number') continue;
      const held = await count(
        query,
        `SELECT count(*) AS n FROM desktops WHERE ${scope.column} = $1 AND type = 'persistent'`,
        row.id,
      );
      if (held + (adding.get(row.id) ?? 0) > limit)
        throw exceeded(scope.code, { limit, [scope.param]: row.id });
    }
  }
}
