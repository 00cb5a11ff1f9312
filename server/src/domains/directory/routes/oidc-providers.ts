/**
 * Administration of the categories' OpenID Connect providers (admins): the plain CRUD of the
 * adminOidcProviders resource. The client secret is taken, never answered.
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { oidcProvidersCrud } from '../oidc-providers.ts';
import { actorOf } from '../plugin.ts';

export default async function adminOidcProviderRoutes(app: FastifyInstance) {
  crudRoutes(app, 'adminOidcProviders', oidcProvidersCrud(app.db), (request) =>
    actorOf(authOf(request)),
  );
}
