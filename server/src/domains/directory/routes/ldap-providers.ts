/**
 * Administration of the categories' LDAP directories (admins): the plain CRUD of the
 * adminLdapProviders resource. The service account's password is taken, never answered.
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { ldapProvidersCrud } from '../ldap-providers.ts';
import { actorOf } from '../plugin.ts';

export default async function adminLdapProviderRoutes(app: FastifyInstance) {
  crudRoutes(app, 'adminLdapProviders', ldapProvidersCrud(app.db), (request) =>
    actorOf(authOf(request)),
  );
}
