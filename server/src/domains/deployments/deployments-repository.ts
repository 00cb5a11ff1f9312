/**
 * Deployments: the generic repository of the `deployments` table (scoped by owner and category,
 * version bumped on every write) plus the reads the deployment service needs in one statement:
 * rows with the computed properties the schema declares (`x-db.computed`), the desktop counters
 * of several deployments and the desktops of one with their owners' names. Writes of desktops
 * still go through the desktops repository.
 */
import type { FastifyPluginAsync } from 'fastify';
import { asc, eq, getTableColumns, inArray, sql, type SQL } from 'drizzle-orm';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import {
  categories,
  deployments,
  deploymentsComputed,
  desktops,
  groups,
  users,
  type DeploymentReadRow,
  type DesktopRow,
} from '../../platform/db/schema.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import {
  entityRepository,
  type EntityRepository,
  type Executor,
} from '../../platform/repository/entity-repository.ts';

/** The desktop counters of a deployment, as the list shows them. */
export interface DeploymentCounts {
  totalDesktops: number;
  visibleDesktops: number;
  startedDesktops: number;
  creatingDesktops: number;
}

/** A deployment desktop with its owner's names. */
export interface NamedDeploymentDesktop {
  row: DesktopRow;
  username: string | null;
  userName: string | null;
  userPhoto: string | null;
  email: string | null;
  groupName: string | null;
  categoryName: string | null;
}

export interface DeploymentsRepository extends EntityRepository<'deployments'> {
  /** Rows with their computed properties, matching `where`. */
  read(where?: SQL, on?: Executor): Promise<DeploymentReadRow[]>;
  /** Counters by deployment id (deployments without desktops get zeros). */
  counts(ids: readonly string[]): Promise<Map<string, DeploymentCounts>>;
  /** The desktops of a deployment with their owners' names, by owner name. */
  desktopsOf(id: string, on?: Executor): Promise<NamedDeploymentDesktop[]>;
  /** The deployments a user owns or co-owns, with their computed properties. */
  ownedOrCoOwnedBy(userId: string): Promise<DeploymentReadRow[]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    deployments: DeploymentsRepository;
  }
}

/** The counters of a deployment without desktops. */
export const NO_DESKTOPS: DeploymentCounts = {
  totalDesktops: 0,
  visibleDesktops: 0,
  startedDesktops: 0,
  creatingDesktops: 0,
};

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  const table = entityRepository(db, 'deployments');
  const running = [...RUNNING_STATES] as DesktopRow['state'][];

  const read = (where?: SQL, on: Executor = db): Promise<DeploymentReadRow[]> =>
    on
      .select({ ...getTableColumns(deployments), ...deploymentsComputed })
      .from(deployments)
      .where(where)
      .orderBy(asc(deployments.id));

  app.decorate('deployments', {
    ...table,
    read,
    async counts(ids) {
      const out = new Map<string, DeploymentCounts>(ids.map((id) => [id, { ...NO_DESKTOPS }]));
      if (ids.length === 0) return out;
      const rows = await db
        .select({
          tag: desktops.tag,
          total: sql<number>`count(*)::int`,
          visible: sql<number>`(count(*) FILTER (WHERE ${desktops.visible}))::int`,
          started: sql<number>`(count(*) FILTER (WHERE ${inArray(desktops.state, running)}))::int`,
          creating: sql<number>`(count(*) FILTER (WHERE ${desktops.state} = 'creating'))::int`,
        })
        .from(desktops)
        .where(inArray(desktops.tag, [...ids]))
        .groupBy(desktops.tag);
      for (const r of rows)
        if (r.tag !== null)
          out.set(r.tag, {
            totalDesktops: Number(r.total),
            visibleDesktops: Number(r.visible),
            startedDesktops: Number(r.started),
            creatingDesktops: Number(r.creating),
          });
      return out;
    },
    async desktopsOf(id, on = db) {
      return on
        .select({
          row: getTableColumns(desktops),
          username: users.username,
          userName: users.name,
          userPhoto: users.photo,
          email: users.email,
          groupName: groups.name,
          categoryName: categories.name,
        })
        .from(desktops)
        .leftJoin(users, eq(users.id, desktops.userId))
        .leftJoin(groups, eq(groups.id, desktops.groupId))
        .leftJoin(categories, eq(categories.id, desktops.categoryId))
        .where(eq(desktops.tag, id))
        .orderBy(asc(users.name), asc(desktops.id));
    },
    ownedOrCoOwnedBy(userId) {
      return read(
        sql`(${deployments.userId} = ${userId} OR ${deployments.coOwners} @> ${JSON.stringify([userId])}::jsonb)`,
      );
    },
  } satisfies DeploymentsRepository);
};

export default globalPlugin(plugin, 'deployments-repository');
