/**
 * The sign-in ways the login page offers (`GET /authentication/providers`): the form, and each
 * category's enabled directory, OpenID Connect and SAML providers with their labels and icons.
 */
import type { FastifyInstance } from 'fastify';
import { enabledLdapLabels, enabledOidcButtons } from '../../directory/index.ts';
import { samlButtons } from './saml.ts';

export async function loginProviders(app: FastifyInstance) {
  return {
    providers: ['form' as const],
    ldap: (await enabledLdapLabels(app.db)).map((d) => ({
      category_id: d.categoryId,
      label: d.label,
    })),
    oidc: (await enabledOidcButtons(app.db)).map((p) => ({
      category_id: p.categoryId,
      label: p.label,
      icon: p.icon,
    })),
    saml: await samlButtons(app),
  };
}
