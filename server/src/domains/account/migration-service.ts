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
import { ApiError } from '../../platform/http/api-error.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import type { Settings } from '../../platform/repository/settings-repository.ts';
import { constants } from '../../../../src/generated/constants.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import type {
  ProfileMigrationItem,
  ProfileMigrationItems,
  ProfileMigrationResult,
} from '../../../../src/generated/types.ts';
import {
  asDate,
  broken,
  isEmpty,
  ownedItems,
  quotaErrors,
  ruleBroken,
  type MigrationRow,
  type Status,
} from './migration-rules.ts';
import { migrationTransfer, type MovedItems } from './migration-transfer.ts';

const CODE_VALIDITY_SECONDS = constants.Migration.codeValiditySeconds.value;

/** Lock space of the per-target import lock (apart from the quota and VPN locks). */
const IMPORT_LOCK_SPACE = 11;

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

  const { transfer, announce, deleteOrDisable } = migrationTransfer(app);

  return {
    async exportCode(originId) {
      const settings = await app.settings.all();
      if (!settings.migration.export)
        throw new ApiError('forbidden', 'Exporting users is disabled', 'migration_export_disabled');
      const origin = await userOf(originId);
      if (!origin?.active) throw new ApiError('user_disabled', 'Disabled user', 'user_disabled');
      if (hasRoleAtLeast(origin.role, role.admin))
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
      let moved: MovedItems;
      try {
        moved = await transfer(row, origin, target, settings);
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
      if (action === 'disable') await app.users.disable(origin.id);
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
