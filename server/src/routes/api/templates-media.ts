/**
 * Read-only template and media lists the desktop screens need (template selection, ISO/floppy
 * pickers). Templates and media management (create, share, download) come with their own issue.
 */
import type { FastifyInstance } from 'fastify';
import { asc, eq } from 'drizzle-orm';
import { route } from '../../lib/route.ts';
import { isAllowed } from '../../lib/ownership.ts';
import { authOf } from '../../plugins/app/auth.ts';
import { categories, groups, media, templates, users } from '../../db/schema.ts';
import type { Media, Template } from '../../../../src/generated/types.ts';

export default async function templatesMediaRoutes(app: FastifyInstance) {
  const { db } = app;

  route(app, 'templates.allowed', async (request) => {
    const auth = authOf(request);
    const { kind } = request.params as { kind: 'all' | 'shared' };
    const rows = await db
      .select({
        t: templates,
        userName: users.name,
        categoryName: categories.name,
        groupName: groups.name,
      })
      .from(templates)
      .leftJoin(users, eq(users.id, templates.userId))
      .leftJoin(categories, eq(categories.id, templates.categoryId))
      .leftJoin(groups, eq(groups.id, templates.groupId))
      .where(eq(templates.enabled, true))
      .orderBy(asc(templates.name));
    return rows
      .filter(({ t }) => isAllowed(auth, t) && (kind === 'all' || t.userId !== auth.userId))
      .map(({ t, userName, categoryName, groupName }): Template => ({
        id: t.id,
        name: t.name,
        description: t.description,
        kind: 'template',
        type: 'nonpersistent',
        image: t.image as Template['image'],
        user: t.userId,
        user_name: userName,
        category: t.categoryId,
        category_name: categoryName,
        group: t.groupId,
        group_name: groupName,
        enabled: t.enabled,
        status: 'Stopped',
        editable: auth.role === 'admin' || t.userId === auth.userId,
        version: t.version,
      }));
  });

  route(app, 'media.shared', async (request) => {
    const auth = authOf(request);
    const rows = await db
      .select({ m: media, userName: users.name })
      .from(media)
      .leftJoin(users, eq(users.id, media.userId))
      .orderBy(asc(media.name));
    return rows
      .filter(({ m }) => m.status !== 'deleted' && isAllowed(auth, m))
      .map(({ m, userName }): Media => ({
        id: m.id,
        name: m.name,
        description: m.description,
        kind: m.kind,
        type: m.kind === 'iso' ? 'isos' : 'floppies',
        status: m.status.toLowerCase() as Media['status'],
        user: m.userId,
        user_name: userName,
        category: m.categoryId,
        group: m.groupId,
        editable: auth.role === 'admin' || m.userId === auth.userId,
        version: m.version,
      }));
  });
}
