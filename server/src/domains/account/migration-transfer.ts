/**
 * The transfer of a migration: with every origin desktop stopped and (when the settings check
 * quotas) the items fitting the target's quota, ownership of everything moves in one transaction
 * and the row becomes migrated; then the events that move the items from the origin's lists to
 * the target's, and the origin deleted (only when it owns nothing any more) or disabled.
 */
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import {
  deployments,
  desktops,
  media,
  templates,
  type DesktopRow,
  type TemplateRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Settings } from '../../platform/repository/settings-repository.ts';
import { lockQuotaScopes } from '../quotas/index.ts';
import { templateItem } from '../templates/index.ts';
import type { ProfileMigrationResult } from '../../../../src/generated/types.ts';
import {
  MOVABLE_STATES,
  broken,
  freeDesktopName,
  ownedItems,
  quotaErrors,
  subjectOf,
  type MigrationRow,
} from './migration-rules.ts';

/** What a migration moved. */
export interface MovedItems {
  desktops: DesktopRow[];
  templates: TemplateRow[];
  media: string[];
  deployments: string[];
}

export function migrationTransfer(app: FastifyInstance) {
  const { db } = app;
  const { query } = app.database;

  /** Moves everything the origin owns to the target in one transaction; the row becomes migrated. */
  const transfer = (
    row: Pick<MigrationRow, 'id'>,
    origin: UserRow,
    target: UserRow,
    settings: Settings,
  ): Promise<MovedItems> =>
    db.transaction(async (tx) => {
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
      await q(`UPDATE user_migrations SET status = 'migrated', result = $2::jsonb WHERE id = $1`, [
        row.id,
        JSON.stringify(result),
      ]);
      return {
        desktops: before,
        templates: movedTemplates,
        media: movedMedia.map((m) => m.id),
        deployments: movedDeployments.map((p) => p.id),
      };
    });

  const announce = async (origin: UserRow, target: UserRow, moved: MovedItems) => {
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
        await app.users.remove(origin.id);
        return;
      } catch (err) {
        app.log.warn({ err, user: origin.id }, 'migrated user not deleted, disabled instead');
      }
    }
    await app.users.disable(origin.id);
  };

  return { transfer, announce, deleteOrDisable };
}
