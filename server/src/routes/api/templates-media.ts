/**
 * Read-only template and media lists the desktop screens need (template selection, ISO/floppy
 * pickers): what the caller may use, through the allowed lists.
 */
import type { FastifyInstance } from 'fastify';
import { eq, ne } from 'drizzle-orm';
import { route } from '../../lib/route.ts';
import { isAllowed } from '../../lib/ownership.ts';
import { authOf } from '../../plugins/app/auth.ts';
import { media, mediaToWire, templates, templateToWire } from '../../db/schema.ts';
import type { Media, Template } from '../../../../src/generated/types.ts';

export default async function templatesMediaRoutes(app: FastifyInstance) {
  route(app, 'templates.allowed', async (request) => {
    const auth = authOf(request);
    const rows = await app.templates.named(eq(templates.enabled, true));
    return rows
      .filter(
        ({ row }) =>
          isAllowed(auth, row) && (request.params.kind === 'all' || row.userId !== auth.userId),
      )
      .map(({ row, userName, categoryName, groupName }): Template => ({
        ...templateToWire(row),
        kind: 'template',
        type: 'nonpersistent',
        user_name: userName,
        category_name: categoryName,
        group_name: groupName,
        status: 'Stopped',
        editable: auth.role === 'admin' || row.userId === auth.userId,
      }));
  });

  route(app, 'media.shared', async (request) => {
    const auth = authOf(request);
    const rows = await app.media.named(ne(media.status, 'deleted'));
    return rows
      .filter(({ row }) => isAllowed(auth, row))
      .map(({ row, userName }): Media => ({
        ...mediaToWire(row),
        type: row.kind === 'iso' ? 'isos' : 'floppies',
        user_name: userName,
        editable: auth.role === 'admin' || row.userId === auth.userId,
      }));
  });
}
