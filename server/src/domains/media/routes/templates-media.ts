/**
 * The shared media list the desktop screens need (ISO/floppy pickers): what the caller may use,
 * through the allowed lists, without the source URL of media the caller does not manage. (Templates have their own routes, templates.ts.)
 */
import type { FastifyInstance } from 'fastify';
import { ne } from 'drizzle-orm';
import { route } from '../../../platform/http/route.ts';
import { isAllowed } from '../../../platform/lib/ownership.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { media, mediaToWire } from '../../../platform/db/schema.ts';
import type { Media } from '../../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../../src/generated/policy.ts';

export default async function templatesMediaRoutes(app: FastifyInstance) {
  route(app, 'media.shared', async (request) => {
    const auth = authOf(request);
    const rows = await app.media.named(ne(media.status, 'deleted'));
    return rows
      .filter(({ row, ownerRole }) => isAllowed(auth, { ...row, ownerRole }))
      .map(({ row, userName }): Media => {
        const editable = hasRoleAtLeast(auth.role, role.admin) || row.userId === auth.userId;
        const { url, ...wire } = mediaToWire(row);
        return {
          ...wire,
          // Where a medium came from is its owner's business: others only use it.
          ...(editable && url ? { url } : {}),
          type: row.kind === 'iso' ? 'isos' : 'floppies',
          user_name: userName,
          editable,
        };
      });
  });
}
