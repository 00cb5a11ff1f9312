/**
 * Deployment calls: list, create, show, edit form, edit, target users, recreate, start and stop
 * all, visibility (of the deployment and of one desktop), delete to the recycle bin or for good,
 * co-owners, the users' permissions, the quota checks, the users a set of groups counts and the
 * direct-viewer CSV. The deployment service does the work; the routes validate and answer.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';
import type { AllowedShareLists } from '../../../../src/generated/types.ts';

/** Base64 card images (≤ 3 MiB decoded) ride in the JSON body of create and update. */
const IMAGE_BODY_LIMIT = 5 * 1024 * 1024;

export default async function deploymentRoutes(app: FastifyInstance) {
  const service = app.deploymentService;

  route(app, 'deployments.list', (request) => service.list(authOf(request)));

  route(app, 'deployments.create', (request) => service.create(authOf(request), request.body), {
    bodyLimit: IMAGE_BODY_LIMIT,
  });

  route(app, 'deployments.show', (request) => service.show(authOf(request), request.params.id));

  route(app, 'deployments.info', (request) => service.info(authOf(request), request.params.id));

  route(
    app,
    'deployments.update',
    async (request) => {
      await service.update(authOf(request), request.params.id, request.body);
      return {};
    },
    { bodyLimit: IMAGE_BODY_LIMIT },
  );

  route(app, 'deployments.updateUsers', async (request) => {
    // the body schema requires at least one user or group: the lists are the share lists
    await service.updateUsers(
      authOf(request),
      request.params.id,
      request.body.allowed as AllowedShareLists,
    );
    return {};
  });

  route(app, 'deployments.toggleVisible', async (request) => {
    await service.toggleVisible(
      authOf(request),
      request.params.id,
      request.body.stop_started_domains === true,
    );
    return {};
  });

  route(app, 'deployment-desktops.toggleVisible', async (request) => {
    await service.toggleDesktopVisible(authOf(request), request.params.id);
    return {};
  });

  route(app, 'deployments.delete', async (request) => {
    await service.delete(authOf(request), request.params.id, false);
    return {};
  });

  route(app, 'deployments.deletePermanent', async (request) => {
    await service.delete(authOf(request), request.params.id, true);
    return {};
  });

  route(app, 'deployments.recreate', async (request) => {
    await service.recreate(authOf(request), request.params.id);
    return {};
  });

  route(app, 'deployments.startAll', async (request) => {
    await service.startAll(authOf(request), request.params.id);
    return {};
  });

  route(app, 'deployments.stopAll', async (request) => {
    await service.stopAll(authOf(request), request.params.id);
    return {};
  });

  route(app, 'deployments.coOwners', (request) =>
    service.coOwners(authOf(request), request.params.id),
  );

  route(app, 'deployments.updateCoOwners', async (request) => {
    await service.updateCoOwners(authOf(request), request.params.id, request.body.co_owners);
    return {};
  });

  route(app, 'deployments.permissions', (request) =>
    service.permissions(authOf(request), request.params.id),
  );

  route(app, 'deployments.checkQuota', async (request) => {
    await service.checkQuota(authOf(request));
    return {};
  });

  route(app, 'deployments.checkQuotaUsers', async (request) => {
    await service.checkQuota(authOf(request), request.body.allowed);
    return {};
  });

  route(app, 'deployments.countGroupsUsers', async (request) => ({
    quantity: await service.countGroupsUsers(authOf(request), request.body.groups),
  }));

  // Every download makes new links (see the service): never cached, never referred.
  route(app, 'deployments.directViewerCsv', async (request, reply) => {
    const { filename, content } = await service.directViewerCsv(authOf(request), request.params.id);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header(
        'content-disposition',
        `attachment; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
      )
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .send(content);
  });
}
