/**
 * User migration between accounts of one category: the export code, its import by the target
 * account, what it would move, the move itself, and whether export and import are enabled.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { countAttempt, MIGRATION_IMPORTS } from '../../../platform/auth/attempt-windows.ts';
import { createMigrationService } from '../migration-service.ts';

export default async function migrationRoutes(app: FastifyInstance) {
  const migrations = createMigrationService(app);

  // A login token, or the token of a user whose login asks for a migration first.
  route(app, 'profile.exportMigration', async (request) => {
    const userId = request.auth?.userId ?? request.specialToken?.user_id;
    if (!userId)
      throw new ApiError('unauthorized', 'Authorization header is expected', 'missing_token');
    return migrations.exportCode(userId);
  });

  route(app, 'profile.importMigration', async (request) => {
    const { userId } = authOf(request);
    await countAttempt(app, MIGRATION_IMPORTS, userId);
    await migrations.importCode(userId, request.body.token);
    return {};
  });

  route(app, 'profile.migrationItems', async (request) => migrations.items(authOf(request).userId));

  route(app, 'profile.migrate', async (request) => migrations.migrate(authOf(request).userId));

  route(app, 'profile.exportEnabled', async (request) =>
    migrations.enabled(request.params.provider, 'export'),
  );

  route(app, 'profile.importEnabled', async (request) =>
    migrations.enabled(request.params.provider, 'import'),
  );
}
