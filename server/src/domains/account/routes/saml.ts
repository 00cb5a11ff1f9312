/**
 * SAML sign-in routes: the login page's button (GET /authentication/login/saml), our service
 * provider metadata, the assertion consumer service, which ends in the form login's finishLogin
 * (../saml-login.ts does the protocol and the account), and the single logout address (the
 * return from ours, and the identity provider's own logout request: ../saml-logout.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { samlSchemaValidator } from '../../../platform/auth/saml-schema.ts';
import { enabledSamlButtons } from '../../directory/index.ts';
import {
  ACS_PATH,
  finishSamlLogin,
  SAML_STATE_COOKIE,
  samlLogoutLocation,
  sendSamlStart,
  sendSpMetadata,
} from '../saml-login.ts';
import { answerIdpLogout } from '../saml-logout.ts';
import type { OidcRoutesOptions } from './oidc.ts';
import { sendToken } from './send-token.ts';

/** The enabled SAML providers as the login page's buttons. */
export async function samlButtons(app: FastifyInstance) {
  return (await enabledSamlButtons(app.db)).map((p) => ({
    id: p.id,
    category_id: p.categoryId,
    label: p.label,
    icon: p.icon,
  }));
}

/** The logout's answer: on through the identity provider's single logout when the account has one. */
export async function samlLogout(
  app: FastifyInstance,
  request: FastifyRequest,
  userId: string,
): Promise<{ redirect?: string }> {
  const user = await app.users.byId(userId);
  const redirect = user ? await samlLogoutLocation(app, request, user) : undefined;
  return redirect ? { redirect } : {};
}

export default async function samlRoutes(app: FastifyInstance, options: OidcRoutesOptions) {
  // the schema check's thread ends with the app, so that a closed app leaves nothing running
  app.addHook('onClose', () => samlSchemaValidator.close());

  // A navigation, not a form: the 302 leads to the identity provider's origin.
  route(app, 'session.samlLogin', async (request, reply) =>
    sendSamlStart(app, request, reply, request.query.provider, request.query.redirect),
  );

  route(app, 'session.samlMetadata', async (request, reply) =>
    sendSpMetadata(app, request, reply, request.query.provider),
  );

  // The identity provider's page posts the answer here; the sign-in ends as a form login does.
  route(app, 'session.samlAcs', async (request, reply) => {
    const { outcome, redirect } = await finishSamlLogin(app, request, request.body);
    reply.header('set-cookie', `${SAML_STATE_COOKIE}=; Path=${ACS_PATH}; Max-Age=0`);
    // a login step (category-select, register) goes to its page as an OIDC sign-in's does
    if ('step' in outcome)
      return sendToken(request, reply, outcome.step.token, outcome.step.seconds, redirect);
    return options.finishLogin(outcome.user, request, reply, redirect);
  });

  // The identity provider's own logout request ends the person's sessions (../saml-logout.ts);
  // its answer to ours comes after the session ended: back to the login page.
  route(app, 'session.samlSlo', async (request, reply) => {
    const { SAMLRequest, ...rest } = request.query;
    if (SAMLRequest) return answerIdpLogout(app, request, reply, { SAMLRequest, ...rest });
    return reply.code(302).header('location', '/login').send();
  });
}
