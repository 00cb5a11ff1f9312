/**
 * Administration of the categories' SAML identity providers (admins): the plain CRUD of the
 * adminSamlProviders resource. Our private key is taken, never answered.
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { samlProvidersCrud } from '../saml-providers.ts';
import { actorOf } from '../plugin.ts';

export default async function adminSamlProviderRoutes(app: FastifyInstance) {
  crudRoutes(app, 'adminSamlProviders', samlProvidersCrud(app.db), (request) =>
    actorOf(authOf(request)),
  );
}
