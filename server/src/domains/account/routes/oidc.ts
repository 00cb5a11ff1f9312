/**
 * OpenID Connect sign-in routes: the login page's button (GET /authentication/login/oidc; POST
 * /authentication/login?provider=oidc answers the same) and the provider's callback, which ends
 * in the form login's finishLogin (../oidc-login.ts does the protocol and the account).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import { CALLBACK_PATH, finishOidcLogin, OIDC_STATE_COOKIE, sendOidcStart } from '../oidc-login.ts';

export interface OidcRoutesOptions {
  /** The form login's last step: account checks, steps, session and token (to `redirect`). */
  finishLogin(
    user: UserRow,
    request: FastifyRequest,
    reply: FastifyReply,
    redirect?: string,
  ): Promise<FastifyReply>;
}

export default async function oidcRoutes(app: FastifyInstance, options: OidcRoutesOptions) {
  // The login page's button navigates here: a form's POST could not follow the 302 to another
  // origin under the portal's form-action policy.
  route(app, 'session.oidcLogin', async (request, reply) =>
    sendOidcStart(app, request, reply, request.query.category_id, request.query.redirect),
  );

  // The provider sends the browser back here; the sign-in ends as a form login does.
  route(app, 'session.callback', async (request, reply) => {
    const { user, redirect } = await finishOidcLogin(app, request, request.query);
    reply.header('set-cookie', `${OIDC_STATE_COOKIE}=; Path=${CALLBACK_PATH}; Max-Age=0`);
    return options.finishLogin(user, request, reply, redirect);
  });
}
