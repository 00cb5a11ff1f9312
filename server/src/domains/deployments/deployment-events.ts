/**
 * The live view of deployments for their owners and co-owners.
 *
 * Every change of a deployment desktop (whoever wrote it: the engine, the desktop calls, the
 * deployment calls) marks it; marks are flushed shortly after, one flush at a time, and a flush
 * reads the desktops as they are NOW and tells each audience what changed since it last told them:
 * `deploymentdesktop_add` for a desktop they were never told about, `_update` for one they were,
 * `_delete` for one that is gone (or left the deployment), then `deployments_update` with the
 * counters. So, whatever the order writes and events arrive in, the last event about a desktop is
 * its current state, a desktop is added once, and a removed desktop never comes back as an update
 * (no phantom rows after a recreate).
 */
import type { FastifyInstance } from 'fastify';
import { isNotNull } from 'drizzle-orm';
import { desktops, type DeploymentRow } from '../../platform/db/schema.ts';
import type { Deployment, DeploymentDesktop } from '../../../../src/generated/types.ts';
import { audienceOf } from './deployment-access.ts';

/** How long changes are gathered before they are pushed (ms). */
const FLUSH_DELAY_MS = 50;

export interface DeploymentEvents {
  /** Loads which desktops belong to which deployment (boot). */
  init(): Promise<void>;
  /** Marks desktops of a deployment as changed (or the deployment itself, with no ids). */
  touch(deploymentId: string, desktopIds?: readonly string[]): void;
  /** Resolves once every change marked so far has been pushed. */
  settled(): Promise<void>;
  /** Forgets a deployment that is gone (after its deletion was announced). */
  forget(deploymentId: string): void;
  close(): void;
}

export function createDeploymentEvents(
  app: FastifyInstance,
  build: {
    listItem(row: DeploymentRow): Promise<Deployment>;
    desktopItem(desktopId: string): Promise<DeploymentDesktop | undefined>;
  },
): DeploymentEvents {
  /** desktop id -> deployment id, for every desktop known to belong to a deployment. */
  const tagOf = new Map<string, string>();
  /** deployment id -> desktop ids its audience has been told exist. */
  const told = new Map<string, Set<string>>();
  /** deployment id -> desktop ids changed since the last flush. */
  const marked = new Map<string, Set<string>>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let closed = false;

  const toldOf = (deploymentId: string) => {
    let set = told.get(deploymentId);
    if (!set) told.set(deploymentId, (set = new Set()));
    return set;
  };

  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      chain = chain.then(flush).catch((err: unknown) => {
        app.log.warn({ err }, 'deployment events flush failed');
      });
    }, FLUSH_DELAY_MS);
    timer.unref();
  };

  const touch = (deploymentId: string, desktopIds: readonly string[] = []) => {
    let set = marked.get(deploymentId);
    if (!set) marked.set(deploymentId, (set = new Set()));
    for (const id of desktopIds) {
      set.add(id);
      tagOf.set(id, deploymentId);
    }
    schedule();
  };

  const flush = async () => {
    const batch = [...marked];
    marked.clear();
    for (const [deploymentId, ids] of batch) {
      const deployment = await app.deployments.get(deploymentId);
      if (!deployment) continue;
      const audience = audienceOf(deployment);
      const known = toldOf(deploymentId);
      for (const desktopId of ids) {
        const item = await build.desktopItem(desktopId);
        if (item && item.tag === deploymentId) {
          const name = known.has(desktopId)
            ? 'deployment-desktops.updated'
            : 'deployment-desktops.created';
          known.add(desktopId);
          for (const ownerId of audience) app.events.publish({ name, payload: item, ownerId });
        } else {
          if (!item) tagOf.delete(desktopId);
          if (!known.delete(desktopId)) continue;
          for (const ownerId of audience)
            app.events.publish({
              name: 'deployment-desktops.deleted',
              payload: { id: desktopId, tag: deploymentId },
              ownerId,
            });
        }
      }
      const listItem = await build.listItem(deployment);
      for (const ownerId of audience)
        app.events.publish({ name: 'deployments.updated', payload: listItem, ownerId });
    }
  };

  app.events.subscribe((event) => {
    if (event.name === 'desktops.created' || event.name === 'desktops.updated') {
      // The deployments domain touches the desktops it creates, so every deployment desktop is
      // known here by the time its own changes are published.
      const tag = tagOf.get(event.payload.id);
      if (tag) touch(tag, [event.payload.id]);
    } else if (event.name === 'desktops.deleted') {
      // A hidden deployment desktop is "deleted" for its user while it still exists: the flush
      // reads it again and tells the owners what it is now.
      const tag = tagOf.get(event.payload.id);
      if (tag) touch(tag, [event.payload.id]);
    }
  });

  return {
    async init() {
      const rows = await app.db
        .select({ id: desktops.id, tag: desktops.tag })
        .from(desktops)
        .where(isNotNull(desktops.tag));
      for (const r of rows)
        if (r.tag) {
          tagOf.set(r.id, r.tag);
          toldOf(r.tag).add(r.id);
        }
    },
    touch,
    async settled() {
      for (let i = 0; i < 100 && (timer || marked.size > 0); i++)
        await new Promise((r) => setTimeout(r, FLUSH_DELAY_MS));
      await chain;
    },
    forget(deploymentId) {
      told.delete(deploymentId);
      marked.delete(deploymentId);
      for (const [desktopId, tag] of tagOf) if (tag === deploymentId) tagOf.delete(desktopId);
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
