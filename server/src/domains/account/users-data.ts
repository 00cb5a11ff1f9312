/**
 * The users_data event: the user's own row with names, secrets left out (no password hash or
 * history, no link ids, no keys), pushed to the user's room after the account changes.
 */
import type { FastifyInstance } from 'fastify';
import { roleNames } from '../../platform/auth/tokens.ts';
import type { ProfileUsersData } from '../../../../src/generated/types.ts';

export async function publishUsersData(app: FastifyInstance, userId: string): Promise<void> {
  const u = await app.users.withNames(userId);
  if (!u) return;
  const payload: ProfileUsersData = {
    id: u.id,
    uid: u.uid,
    username: u.username,
    name: u.name,
    provider: u.provider,
    role: u.role,
    role_name: roleNames[u.role],
    category: u.categoryId,
    category_name: u.categoryName,
    group: u.groupId,
    group_name: u.groupName,
    email: u.email,
    email_verified: u.emailVerified,
    lang: u.lang,
    active: u.active,
    secondary_groups_data: [],
  };
  app.events.publish({ name: 'profile.updated', payload, ownerId: u.id });
}
