/**
 * Templates, media and the recycle bin: the generic repositories of their tables, plus the one
 * read they share, rows with the names of their owner, category and group.
 */
import type { FastifyPluginAsync } from 'fastify';
import { and, asc, desc, eq, getTableColumns, type SQL } from 'drizzle-orm';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import {
  categories,
  groups,
  media,
  recycleBin,
  templates,
  users,
  type MediaRow,
  type RecycleBinRow,
  type TemplateRow,
} from '../../platform/db/schema.ts';
import {
  entityRepository,
  type EntityRepository,
} from '../../platform/repository/entity-repository.ts';
import type { Role } from '../../../../src/generated/types.ts';

/** A row with the display names of its owner, category and group ([Deleted] ones are null). */
export interface Named<R> {
  row: R;
  userName: string | null;
  categoryName: string | null;
  groupName: string | null;
}

/** A template row with its names and its owner's current role (what the ownership rules look at). */
export interface NamedTemplate extends Named<TemplateRow> {
  ownerRole: Role | null;
}

export interface TemplatesRepository extends EntityRepository<'templates'> {
  /** Rows with owner, category and group names and the owner's role, ordered by name. */
  named(where?: SQL): Promise<NamedTemplate[]>;
}

/** A media row with its names and its owner's current role (what the ownership rules look at). */
export interface NamedMedia extends Named<MediaRow> {
  ownerRole: Role | null;
}

export interface MediaRepository extends EntityRepository<'media'> {
  /** Rows with owner, category and group names and the owner's role, ordered by name. */
  named(where?: SQL): Promise<NamedMedia[]>;
}

export interface RecycleBinRepository extends EntityRepository<'recycleBin'> {
  /** An owner's entries in a status, newest first. */
  ownedBy(
    ownerId: string,
    status: RecycleBinRow['status'],
    agentId?: string,
  ): Promise<RecycleBinRow[]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    templates: TemplatesRepository;
    media: MediaRepository;
    recycleBin: RecycleBinRepository;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  const names = { userName: users.name, categoryName: categories.name, groupName: groups.name };

  const templatesRepo = entityRepository(db, 'templates');
  app.decorate('templates', {
    ...templatesRepo,
    async named(where) {
      const rows = await db
        .select({ row: getTableColumns(templates), ...names, ownerRole: users.role })
        .from(templates)
        .leftJoin(users, eq(users.id, templates.userId))
        .leftJoin(categories, eq(categories.id, templates.categoryId))
        .leftJoin(groups, eq(groups.id, templates.groupId))
        .where(where)
        .orderBy(asc(templates.name), asc(templates.id));
      return rows;
    },
  } satisfies TemplatesRepository);

  const mediaRepo = entityRepository(db, 'media');
  app.decorate('media', {
    ...mediaRepo,
    async named(where) {
      return db
        .select({ row: getTableColumns(media), ...names, ownerRole: users.role })
        .from(media)
        .leftJoin(users, eq(users.id, media.userId))
        .leftJoin(categories, eq(categories.id, media.categoryId))
        .leftJoin(groups, eq(groups.id, media.groupId))
        .where(where)
        .orderBy(asc(media.name), asc(media.id));
    },
  } satisfies MediaRepository);

  const binRepo = entityRepository(db, 'recycleBin');
  app.decorate('recycleBin', {
    ...binRepo,
    ownedBy(ownerId, status, agentId) {
      return binRepo.list({
        where: and(
          eq(recycleBin.ownerId, ownerId),
          eq(recycleBin.status, status),
          agentId ? eq(recycleBin.agentId, agentId) : undefined,
        ),
        orderBy: desc(recycleBin.accessed),
      });
    },
  } satisfies RecycleBinRepository);
};

export default globalPlugin(plugin, 'catalog-repositories');
