/**
 * The reads media need besides their own table (app.media): how much media a user, group or
 * category holds (quotas), and which desktops and templates name a medium in their ISO or floppy
 * lists (shown before a delete, cleaned by it).
 *
 * What counts against the media quotas: every medium that is not deleted, downloading ones
 * included (a create and its download hold their unit from the start); for sizes, the bytes of the
 * media that hold or are getting a file (the announced length while downloading).
 */
import type { FastifyPluginAsync } from 'fastify';
import { and, asc, eq, ne, sql, type SQL } from 'drizzle-orm';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { desktops, media, templates, users } from '../../platform/db/schema.ts';
import type { DesktopHardware } from '../../../../src/generated/types.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { mediaStatuses } from '../../../../src/generated/policy.ts';

export interface MediaUsage {
  /** media not deleted */
  count: number;
  /** bytes of the media that hold or are getting a file */
  bytes: number;
}

/** A desktop or template whose hardware names a medium. */
export interface MediaUser {
  id: string;
  name: string;
  kind: 'desktop' | 'template';
  status: string;
  userId: string;
  userName: string | null;
  hardware: DesktopHardware;
}

export interface MediaUsageRepository {
  usage(
    column: 'user_id' | 'group_id' | 'category_id',
    id: string,
    on?: Executor,
  ): Promise<MediaUsage>;
  /** Desktops, then templates, naming the medium, each ordered by name. */
  users(mediaId: string): Promise<MediaUser[]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    mediaUsage: MediaUsageRepository;
  }
}

/** Statuses whose media hold no file (they count as units, not as bytes). */
const WITHOUT_FILE = mediaStatuses.withoutFile;

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  const scopeColumn = {
    user_id: media.userId,
    group_id: media.groupId,
    category_id: media.categoryId,
  } as const;

  /** The hardware lists (isos, floppies) of a jsonb column contain the medium. */
  const names = (
    hardware: typeof desktops.hardware | typeof templates.hardware,
    id: string,
  ): SQL => {
    const ref = JSON.stringify([{ id }]);
    return sql`(${hardware} -> 'isos' @> ${ref}::jsonb or ${hardware} -> 'floppies' @> ${ref}::jsonb)`;
  };

  app.decorate('mediaUsage', {
    async usage(column, id, on = db) {
      const withoutFile = sql.join(
        WITHOUT_FILE.map((s) => sql`${s}`),
        sql`, `,
      );
      const rows = await on
        .select({
          count: sql<string>`count(*)`,
          bytes: sql<string>`coalesce(sum(${media.size}) filter (where ${media.status} not in (${withoutFile})), 0)`,
        })
        .from(media)
        .where(and(eq(scopeColumn[column], id), ne(media.status, 'deleted')));
      return { count: Number(rows[0]?.count ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
    },
    async users(mediaId) {
      const desktopRows = await db
        .select({
          id: desktops.id,
          name: desktops.name,
          status: desktops.state,
          userId: desktops.userId,
          userName: users.name,
          hardware: desktops.hardware,
        })
        .from(desktops)
        .leftJoin(users, eq(users.id, desktops.userId))
        .where(names(desktops.hardware, mediaId))
        .orderBy(asc(desktops.name), asc(desktops.id));
      const templateRows = await db
        .select({
          id: templates.id,
          name: templates.name,
          status: templates.status,
          userId: templates.userId,
          userName: users.name,
          hardware: templates.hardware,
        })
        .from(templates)
        .leftJoin(users, eq(users.id, templates.userId))
        .where(names(templates.hardware, mediaId))
        .orderBy(asc(templates.name), asc(templates.id));
      return [
        ...desktopRows.map((r) => ({ ...r, kind: 'desktop' as const })),
        ...templateRows.map((r) => ({ ...r, kind: 'template' as const })),
      ];
    },
  } satisfies MediaUsageRepository);
};

export default globalPlugin(plugin, 'media-usage-repository');
