/**
 * What still belongs to a group or a category: its users and the desktops, templates, media and
 * deployments that name it. A group or category is deleted only while all of these are zero.
 */
import { eq, sql } from 'drizzle-orm';
import { deployments, desktops, media, templates, users } from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';

type Owner = 'groupId' | 'categoryId';
type Counted =
  typeof users | typeof desktops | typeof templates | typeof media | typeof deployments;

async function countOf(on: Executor, table: Counted, owner: Owner, id: string): Promise<number> {
  const [row] = await on
    .select({ n: sql<number>`count(*)::int` })
    .from(table)
    .where(eq(table[owner], id));
  return row?.n ?? 0;
}

/** The users whose main group (or category) this is. */
export const usersIn = (on: Executor, owner: Owner, id: string) => countOf(on, users, owner, id);

/** The desktops, templates, media and deployments of the group (or category). */
export async function itemsIn(on: Executor, owner: Owner, id: string) {
  return {
    desktops: await countOf(on, desktops, owner, id),
    templates: await countOf(on, templates, owner, id),
    media: await countOf(on, media, owner, id),
    deployments: await countOf(on, deployments, owner, id),
  };
}
