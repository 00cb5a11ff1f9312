/**
 * User migration: an origin account hands its desktops, templates, media and deployments to a
 * target account of the same category.
 *
 * - Export: the origin (not an administrator, owning at least one item) gets a code, a
 *   `user-migration` token valid for an hour whose id is the only one its migration row accepts:
 *   a new code replaces the row's token id, so the previous code stops working.
 * - Import: the target presents the code; an expired one is refused and its row deleted. The
 *   target must be another account of the same category, an administrator's items only go to an
 *   administrator, and the templates, media or deployments of an advanced user, manager or
 *   administrator do not go to a plain user; with quota checking on, the items must fit the
 *   target's quota. The first rule broken is the answer. A target has one imported migration at a
 *   time: importing another code puts the previous one back to exported.
 * - Migrate: under the same rules (checked again) and with every origin desktop stopped, ownership
 *   of everything moves in one transaction; the row goes migrating -> migrated (failed, with the
 *   reason, when the transfer itself fails). Then the origin is told (`msg` user-migrated) and,
 *   as the settings say, disabled, deleted (only when it owns nothing any more; otherwise
 *   disabled) or left alone.
 *
 * Desktops of deployments stay with the deployment: a migrated desktop is a personal one.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import type { Query } from '../../platform/db/client.ts';
import {
  deployments,
  desktops,
  media,
  templates,
  users,
  type DesktopRow,
  type TemplateRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import type { Settings } from '../../platform/repository/settings-repository.ts';
import {
  appliedQuota,
  lockQuotaScopes,
  templatesUsedBy,
  usedBy,
  type QuotaSubject,
  GIB,
} from '../quotas/index.ts';
import { templateItem } from '../templates/index.ts';
import { constants } from '../../../../src/generated/constants.ts';
import type {
  ProfileMigrationItem,
  ProfileMigrationItems,
  ProfileMigrationResult,
} from '../../../../src/generated/types.ts';

const CODE_VALIDITY_SECONDS = constants.Migration.codeValiditySeconds.value;

/** States a desktop may be moved in. */
const MOVABLE_STATES: readonly DesktopRow['state'][] = ['stopped', 'failed'];

/** Lock space of the per-target import lock (apart from the quota and VPN locks). */
const IMPORT_LOCK_SPACE = 11;

const DESKTOP_NAME_MAX = 50;

type Status = 'exported' | 'imported' | 'migrating' | 'migrated' | 'failed' | 'revoked';

interface MigrationRow {
  id: string;
  origin_user_id: string;
  target_user_id: string | null;
  token_jti: string;
  status: Status;
  expires_at: Date | string;
}

/** What an origin owns that a migration moves. */
interface OwnedItems {
  desktops: (ProfileMigrationItem & { persistent: boolean })[];
  templates: ProfileMigrationItem[];
  media: ProfileMigrationItem[];
  deployments: ProfileMigrationItem[];
}

const asDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));

const broken = (code: string, description: string) =>
  new ApiError('precondition_required', description, code);

const subjectOf = (u: UserRow): QuotaSubject => ({
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

async function ownedItems(on: Executor, userId: string): Promise<OwnedItems> {
  const [d, t, m, p] = await Promise.all([
    on
      .select({ id: desktops.id, name: desktops.name, type: desktops.type })
      .from(desktops)
      .where(and(eq(desktops.userId, userId), isNull(desktops.tag)))
      .orderBy(desktops.name, desktops.id),
    on
      .select({ id: templates.id, name: templates.name })
      .from(templates)
      .where(eq(templates.userId, userId))
      .orderBy(templates.name, templates.id),
    on
      .select({ id: media.id, name: media.name, kind: media.kind })
      .from(media)
      .where(and(eq(media.userId, userId), ne(media.status, 'deleted')))
      .orderBy(media.name, media.id),
    on
      .select({ id: deployments.id, name: deployments.name })
      .from(deployments)
      .where(eq(deployments.userId, userId))
      .orderBy(deployments.name, deployments.id),
  ]);
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

const isEmpty = (items: OwnedItems) =>
  items.desktops.length + items.templates.length + items.media.length + items.deployments.length ===
  0;

/** The account rules, in order: the code of the first one broken, or null. */
export function ruleBroken(origin: UserRow, target: UserRow, items: OwnedItems): string | null {
  if (origin.id === target.id) return 'same_user_migration';
  if (origin.categoryId !== target.categoryId) return 'different_category_migration';
  if (origin.role === 'admin' && target.role !== 'admin') return 'role_migration_admin';
  const ownsShared = items.templates.length + items.media.length + items.deployments.length > 0;
  if (origin.role !== 'user' && ownsShared && target.role === 'user') return 'role_migration_user';
  return null;
}

/** The quota codes the items would break in the target's quota (empty when they fit). */
async function quotaErrors(
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

export interface MigrationService {
  exportCode(originId: string): Promise<{ token: string }>;
  importCode(targetId: string, token: string): Promise<void>;
  items(targetId: string): Promise<ProfileMigrationItems>;
  migrate(targetId: string): Promise<ProfileMigrationResult>;
  enabled(provider: string, direction: 'export' | 'import'): Promise<{ enabled: boolean }>;
}

/** The login providers whose accounts can migrate. */
const PROVIDERS: readonly string[] = ['form', 'local'];

export function createMigrationService(app: FastifyInstance): MigrationService {
  const { db } = app;
  const { query } = app.database;

  const userOf = async (id: string): Promise<UserRow | undefined> => app.users.byId(id);

  const importedFor = async (targetId: string): Promise<MigrationRow | undefined> => {
    const rows = await query<MigrationRow>(
      `SELECT id, origin_user_id, target_user_id, token_jti, status, expires_at
       FROM user_migrations WHERE target_user_id = $1 AND status = 'imported'
       ORDER BY import_time DESC LIMIT 1`,
      [targetId],
    );
    return rows[0];
  };

  /** The imported migration of the target with both accounts, re-checked against the rules. */
  const checkedImport = async (targetId: string, settings: Settings) => {
    const row = await importedFor(targetId);
    const noMigration = () =>
      broken('invalid_token', 'No migration code was imported into this account');
    if (!row) throw noMigration();
    const [origin, target] = await Promise.all([userOf(row.origin_user_id), userOf(targetId)]);
    if (!origin || !target) throw noMigration();
    const items = await ownedItems(db, origin.id);
    const rule = ruleBroken(origin, target, items);
    if (rule) throw broken(rule, 'The migration is not allowed');
    const quota = await quotaErrors(app, query, db, target, origin.id, items);
    if (settings.migration.check_quotas && quota[0]) throw broken(quota[0], 'Quota exceeded');
    return { row, origin, target, items, quota };
  };

  const announce = async (
    origin: UserRow,
    target: UserRow,
    moved: {
      desktops: DesktopRow[];
      templates: TemplateRow[];
      media: string[];
      deployments: string[];
    },
  ) => {
    for (const row of moved.desktops) {
      app.desktops.announceRemoved(row);
      await app.desktops.publishCurrent(row.id, 'desktops.created');
    }
    for (const row of moved.templates) {
      app.events.publish({
        name: 'templates.deleted',
        payload: { id: row.id, version: row.version + 1 },
        ownerId: origin.id,
      });
      const named = (await app.templates.named(eq(templates.id, row.id)))[0];
      if (named)
        app.events.publish({
          name: 'templates.created',
          payload: templateItem(named, {
            userId: target.id,
            role: target.role,
            categoryId: target.categoryId,
          }),
          ownerId: target.id,
        });
    }
    for (const id of moved.media)
      app.events.publish({ name: 'media.deleted', payload: { id }, ownerId: origin.id });
    for (const id of moved.deployments)
      app.events.publish({ name: 'deployments.deleted', payload: { id }, ownerId: origin.id });
    if (moved.deployments.length > 0) await app.deploymentService.restored(moved.deployments);
  };

  /** Deletes the origin when nothing refers to it any more; disables it otherwise. */
  const deleteOrDisable = async (origin: UserRow) => {
    await app.sessions.revokeUser(origin.id);
    const leftovers = await query<{ n: string }>(
      `SELECT (SELECT count(*) FROM desktops WHERE user_id = $1)
            + (SELECT count(*) FROM templates WHERE user_id = $1)
            + (SELECT count(*) FROM media WHERE user_id = $1)
            + (SELECT count(*) FROM deployments WHERE user_id = $1)
            + (SELECT count(*) FROM recycle_bin WHERE owner_id = $1) AS n`,
      [origin.id],
    );
    if (Number(leftovers[0]?.n ?? 0) === 0) {
      try {
        await db.delete(users).where(eq(users.id, origin.id));
        app.sessions.clearCache();
        return;
      } catch (err) {
        app.log.warn({ err, user: origin.id }, 'migrated user not deleted, disabled instead');
      }
    }
    await app.users.update(origin.id, { active: false });
  };

  return {
    async exportCode(originId) {
      const settings = await app.settings.all();
      if (!settings.migration.export)
        throw new ApiError('forbidden', 'Exporting users is disabled', 'migration_export_disabled');
      const origin = await userOf(originId);
      if (!origin?.active) throw new ApiError('user_disabled', 'Disabled user', 'user_disabled');
      if (origin.role === 'admin')
        throw new ApiError(
          'forbidden',
          'An administrator account can not be migrated',
          'role_migration_admin',
        );
      if (isEmpty(await ownedItems(db, origin.id)))
        throw new ApiError(
          'bad_request',
          'The account owns nothing to migrate',
          'migration_no_items_available',
        );
      const jti = randomUUID();
      const token = await app.tokens.signSpecial(
        'user-migration',
        origin.id,
        CODE_VALIDITY_SECONDS,
        {
          jti,
        },
      );
      const expiresAt = new Date(Date.now() + CODE_VALIDITY_SECONDS * 1000);
      // One row per origin: a new code takes the row over, the previous code's id is gone.
      const rows = await query<{ id: string }>(
        `INSERT INTO user_migrations (id, origin_user_id, token_jti, status, expires_at)
         VALUES ($1, $2, $3, 'exported', $4)
         ON CONFLICT (origin_user_id) DO UPDATE SET token_jti = EXCLUDED.token_jti,
           status = 'exported', expires_at = EXCLUDED.expires_at, target_user_id = NULL,
           import_time = NULL, result = NULL, created_at = now()
         WHERE user_migrations.status <> 'migrating'
         RETURNING id`,
        [randomUUID(), origin.id, jti, expiresAt],
      );
      if (rows.length === 0)
        throw new ApiError('conflict', 'The account is being migrated', 'migration_in_progress');
      return { token };
    },

    async importCode(targetId, token) {
      const settings = await app.settings.all();
      if (!settings.migration.import)
        throw new ApiError('forbidden', 'Importing users is disabled', 'migration_import_disabled');
      const notFound = () =>
        new ApiError('not_found', 'The migration code was not found', 'migration_not_found');
      let claims;
      try {
        claims = await app.tokens.verify(token, { allowExpired: true });
      } catch {
        throw notFound();
      }
      const jti = claims.jti;
      if (claims.type !== 'user-migration' || typeof jti !== 'string') throw notFound();
      const rows = await query<MigrationRow>(
        `SELECT id, origin_user_id, target_user_id, token_jti, status, expires_at
         FROM user_migrations WHERE token_jti = $1 AND status IN ('exported', 'imported')`,
        [jti],
      );
      const row = rows[0];
      if (!row || row.origin_user_id !== claims.user_id) throw notFound();
      if (claims.exp * 1000 <= Date.now() || asDate(row.expires_at).getTime() <= Date.now()) {
        await query(
          `DELETE FROM user_migrations WHERE id = $1 AND token_jti = $2
           AND status IN ('exported', 'imported')`,
          [row.id, jti],
        );
        throw new ApiError('bad_request', 'The migration code has expired', 'token_expired');
      }
      const [origin, target] = await Promise.all([userOf(row.origin_user_id), userOf(targetId)]);
      if (!origin || !target) throw notFound();
      const items = await ownedItems(db, origin.id);
      const rule = ruleBroken(origin, target, items);
      if (rule) throw broken(rule, 'The migration is not allowed');
      if (settings.migration.check_quotas) {
        const quota = await quotaErrors(app, query, db, target, origin.id, items);
        if (quota[0]) throw broken(quota[0], 'Quota exceeded');
      }
      const imported = await app.database.transaction(async (_exec, tx) => {
        await tx('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [
          IMPORT_LOCK_SPACE,
          target.id,
        ]);
        await tx(
          `UPDATE user_migrations SET status = 'exported', target_user_id = NULL, import_time = NULL
           WHERE target_user_id = $1 AND status = 'imported' AND id <> $2`,
          [target.id, row.id],
        );
        return tx<{ id: string }>(
          `UPDATE user_migrations SET status = 'imported', target_user_id = $2, import_time = now()
           WHERE id = $1 AND token_jti = $3 AND status IN ('exported', 'imported') RETURNING id`,
          [row.id, target.id, jti],
        );
      });
      if (imported.length === 0) throw notFound();
    },

    async items(targetId) {
      const settings = await app.settings.all();
      const { origin, items, quota } = await checkedImport(targetId, settings);
      if (isEmpty(items)) throw broken('no_items_to_migrate', 'There is nothing to migrate');
      const strip = ({ id, name, kind }: ProfileMigrationItem) =>
        kind === undefined ? { id, name } : { id, name, kind };
      return {
        desktops: items.desktops.map(strip),
        templates: items.templates.map(strip),
        media: items.media.map(strip),
        deployments: items.deployments.map(strip),
        origin_user: origin.name,
        ...(settings.migration.check_quotas ? {} : { quota_errors: quota }),
      };
    },

    async migrate(targetId) {
      const settings = await app.settings.all();
      const { row, origin, target, items } = await checkedImport(targetId, settings);
      if (isEmpty(items)) throw broken('no_items_to_migrate', 'There is nothing to migrate');
      const claimed = await query<{ id: string }>(
        `UPDATE user_migrations SET status = 'migrating'
         WHERE id = $1 AND status = 'imported' AND target_user_id = $2 RETURNING id`,
        [row.id, target.id],
      );
      if (claimed.length === 0) {
        // Another request took it first, or the origin made a new code in the meantime.
        const now = await query<{ status: Status }>(
          'SELECT status FROM user_migrations WHERE id = $1',
          [row.id],
        );
        if (now[0]?.status === 'migrating')
          throw new ApiError(
            'conflict',
            'The migration is already running',
            'migration_in_progress',
          );
        throw broken('invalid_token', 'No migration code is imported into this account any more');
      }
      let moved: {
        desktops: DesktopRow[];
        templates: TemplateRow[];
        media: string[];
        deployments: string[];
      };
      try {
        moved = await db.transaction(async (tx) => {
          const q = queryOn(tx);
          await lockQuotaScopes(q, subjectOf(target));
          const before = await tx
            .select()
            .from(desktops)
            .where(and(eq(desktops.userId, origin.id), isNull(desktops.tag)))
            .orderBy(desktops.name, desktops.id)
            .for('update');
          const running = before.filter((d) => !MOVABLE_STATES.includes(d.state));
          if (running.length > 0)
            throw new ApiError(
              'conflict',
              'Stop every desktop of the account being migrated first',
              'desktops_not_stopped',
              { desktops: running.map((d) => d.id) },
            );
          if (settings.migration.check_quotas) {
            const quota = await quotaErrors(
              app,
              q,
              tx,
              target,
              origin.id,
              await ownedItems(tx, origin.id),
            );
            if (quota[0]) throw broken(quota[0], 'Quota exceeded');
          }
          const taken = new Set(
            (
              await tx
                .select({ name: desktops.name })
                .from(desktops)
                .where(eq(desktops.userId, target.id))
            ).map((r) => r.name.trim()),
          );
          const owner = {
            userId: target.id,
            groupId: target.groupId,
            categoryId: target.categoryId,
            version: sql`version + 1`,
            updatedAt: new Date(),
          };
          for (const d of before) {
            const name = freeDesktopName(d.name, taken);
            taken.add(name.trim());
            await tx
              .update(desktops)
              .set({ ...owner, name })
              .where(eq(desktops.id, d.id));
          }
          const movedTemplates = await tx
            .select()
            .from(templates)
            .where(eq(templates.userId, origin.id));
          if (movedTemplates.length > 0)
            await tx
              .update(templates)
              .set(owner)
              .where(
                inArray(
                  templates.id,
                  movedTemplates.map((t) => t.id),
                ),
              );
          const movedMedia = await tx
            .update(media)
            .set(owner)
            .where(and(eq(media.userId, origin.id), ne(media.status, 'deleted')))
            .returning({ id: media.id });
          const movedDeployments = await tx
            .update(deployments)
            .set({ ...owner, coOwners: sql`${deployments.coOwners} - ${target.id}::text` })
            .where(eq(deployments.userId, origin.id))
            .returning({ id: deployments.id });
          const result: ProfileMigrationResult = {
            migrated_desktops: before.length,
            migrated_templates: movedTemplates.length,
            migrated_media: movedMedia.length,
            migrated_deployments: movedDeployments.length,
          };
          await q(
            `UPDATE user_migrations SET status = 'migrated', result = $2::jsonb WHERE id = $1`,
            [row.id, JSON.stringify(result)],
          );
          return {
            desktops: before,
            templates: movedTemplates,
            media: movedMedia.map((m) => m.id),
            deployments: movedDeployments.map((p) => p.id),
          };
        });
      } catch (err) {
        // A rule that no longer holds leaves the migration imported, to retry once it holds again.
        const retryable = err instanceof ApiError && err.statusCode < 500;
        await query(
          `UPDATE user_migrations SET status = $2, result = $3::jsonb WHERE id = $1 AND status = 'migrating'`,
          [
            row.id,
            retryable ? 'imported' : 'failed',
            retryable
              ? null
              : JSON.stringify({ error: err instanceof Error ? err.message : String(err) }),
          ],
        );
        throw err;
      }
      await announce(origin, target, moved);
      sendMessage(app, origin.id, {
        type: 'info',
        msg_code: 'user-migrated',
        params: { name: target.name },
      });
      const action = settings.migration.action_after_migrate;
      if (action === 'disable') await app.users.update(origin.id, { active: false });
      else if (action === 'delete') await deleteOrDisable(origin);
      return {
        migrated_desktops: moved.desktops.length,
        migrated_templates: moved.templates.length,
        migrated_media: moved.media.length,
        migrated_deployments: moved.deployments.length,
      };
    },

    async enabled(provider, direction) {
      if (!PROVIDERS.includes(provider))
        throw new ApiError('not_found', `No provider ${provider}`, 'not_found', { provider });
      const { migration } = await app.settings.all();
      return { enabled: migration[direction] };
    },
  };
}
