/**
 * Test fixtures on top of the demo seed: extra categories, groups and users (they log in with the
 * test password), stopped desktops, media and templates written straight to the database, and
 * row snapshots so a negative test can prove that nothing changed.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  categories,
  desktops,
  groups,
  media,
  templates,
  users,
  type DesktopInsert,
  type MediaInsert,
  type TemplateInsert,
  type UserRow,
} from '../../src/platform/db/schema.ts';
import { demoGuestProperties, demoHardware } from '../../src/seed/index.ts';
import type { Role } from '../../../src/generated/types.ts';
import { loginRequest, TEST_PASSWORD } from './helper.ts';

/** Sharing with nobody: only the owner, admins and managers of the item's category pass. */
export const UNSHARED = { roles: false, categories: false, groups: false, users: false } as const;

export async function addCategory(
  app: FastifyInstance,
  id: string,
  quota: Record<string, unknown> | null = null,
): Promise<void> {
  await app.db.insert(categories).values({ id, name: id, customUrlName: id, quota });
}

export async function addGroup(
  app: FastifyInstance,
  id: string,
  categoryId: string,
  quota: Record<string, unknown> | null = null,
): Promise<void> {
  await app.db.insert(groups).values({ id, categoryId, name: id, quota });
}

/** A local account with the test password (the hash of the seeded `user` is reused). */
export async function addUser(
  app: FastifyInstance,
  values: { username: string; role: Role; categoryId: string; groupId: string },
): Promise<UserRow> {
  const seeded = await app.users.findLocal('user', 'default');
  const [row] = await app.db
    .insert(users)
    .values({
      id: randomUUID(),
      uid: values.username,
      username: values.username,
      name: values.username,
      categoryId: values.categoryId,
      groupId: values.groupId,
      role: values.role,
      passwordHash: seeded?.passwordHash ?? null,
      // an ordinary account: the disclaimer of the demo policy is accepted
      disclaimerAcknowledged: true,
    })
    .returning();
  if (!row) throw new Error(`user ${values.username} not inserted`);
  return row;
}

/** A seeded or added account by user name and category. */
export async function userRow(
  app: FastifyInstance,
  username: string,
  categoryId = 'default',
): Promise<UserRow> {
  const row = await app.users.findLocal(username, categoryId);
  if (!row) throw new Error(`no user ${username} in ${categoryId}`);
  return row;
}

/** Logs in to a category and returns the raw JWT. */
export async function loginTo(
  app: FastifyInstance,
  username: string,
  categoryId: string,
): Promise<string> {
  const res = await loginRequest(app, username, TEST_PASSWORD, categoryId);
  if (res.statusCode !== 200)
    throw new Error(`login ${username}@${categoryId} failed: ${res.statusCode} ${res.body}`);
  return res.body;
}

/** A stopped desktop of `owner` (demo hardware unless given). */
export async function addDesktop(
  app: FastifyInstance,
  owner: UserRow,
  name: string,
  extra: Partial<DesktopInsert> = {},
): Promise<string> {
  const id = randomUUID();
  await app.db.insert(desktops).values({
    id,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    name,
    state: 'stopped',
    hardware: demoHardware(),
    guestProperties: demoGuestProperties(),
    ...extra,
  });
  return id;
}

export async function addMedia(
  app: FastifyInstance,
  owner: UserRow,
  values: Pick<MediaInsert, 'id' | 'kind'> & Partial<MediaInsert>,
): Promise<void> {
  await app.db.insert(media).values({
    name: values.id,
    status: 'downloaded',
    path: `/nonexistent/${values.id}`,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    allowed: UNSHARED,
    ...values,
  });
}

export async function addTemplate(
  app: FastifyInstance,
  owner: UserRow,
  values: Pick<TemplateInsert, 'id'> & Partial<TemplateInsert>,
): Promise<void> {
  await app.db.insert(templates).values({
    name: values.id,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    hardware: demoHardware(),
    guestProperties: demoGuestProperties(),
    allowed: UNSHARED,
    ...values,
  });
}

/** Every column of the desktops matching a condition, as JSON text ordered by id. */
export async function desktopRows(
  app: FastifyInstance,
  where: string,
  params: unknown[] = [],
): Promise<string[]> {
  const rows = await app.database.query<{ row: unknown }>(
    `SELECT to_jsonb(d) AS row FROM desktops d WHERE ${where} ORDER BY id`,
    params,
  );
  return rows.map((r) => JSON.stringify(r.row));
}

/** Every desktop row, as JSON text ordered by id. */
export const allDesktops = (app: FastifyInstance): Promise<string[]> => desktopRows(app, 'true');
