/**
 * OpenID Connect sign-in routes: the login page's button (GET /authentication/login/oidc; POST
 * /authentication/login?provider=oidc answers the same) and the provider's callback, which ends
 * in the form login's finishLogin (../oidc-login.ts does the protocol and the account).
 *
 * The callback is a page the browser opens, not a call of the SPA: a refusal (a state expired or
 * used, an ID token that fails a check, the provider's own error, a disallowed or disabled user)
 * sends the browser back to the login page with the refusal's code (`/login?error=<code>`), which
 * shows its message; no session exists then.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import { CALLBACK_PATH, finishOidcLogin, OIDC_STATE_COOKIE, sendOidcStart } from '../oidc-login.ts';
import { sendToken } from './send-token.ts';

/** The login page a refused sign-in returns to, with the refusal's code. */
export const LOGIN_PAGE = '/login';

export interface OidcRoutesOptions {
  /** The form login's last step: account checks, steps, session and token (to `redirect`). */
  finishLogin(
    user: UserRow,
    request: FastifyRequest,
    reply: FastifyReply,
    redirect?: string,
  ): Promise<FastifyReply>;
}

/** The login page showing the refusal's message. */
export const refusalLocation = (error: ApiError) =>
  `${LOGIN_PAGE}?error=${encodeURIComponent(error.descriptionCode)}`;

export default async function oidcRoutes(app: FastifyInstance, options: OidcRoutesOptions) {
  // The login page's button navigates here: a form's POST could not follow the 302 to another
  // origin under the portal's form-action policy.
  route(app, 'session.oidcLogin', async (request, reply) =>
    sendOidcStart(app, request, reply, request.query.category_id, request.query.redirect),
  );

  // The provider sends the browser back here; the sign-in ends as a form login does.
  route(app, 'session.callback', async (request, reply) => {
    reply.header('set-cookie', `${OIDC_STATE_COOKIE}=; Path=${CALLBACK_PATH}; Max-Age=0`);
    try {
      const { outcome, redirect } = await finishOidcLogin(app, request, request.query);
      // a step's token (category-select, register) leads through the page, whose guard opens
      // the step's page
      if ('step' in outcome)
        return sendToken(request, reply, outcome.step.token, outcome.step.seconds, redirect);
      return await options.finishLogin(outcome.user, request, reply, redirect);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      request.log.info({ code: error.descriptionCode }, 'OpenID Connect sign-in refused');
      return reply
        .code(302)
        .header('cache-control', 'no-store')
        .header('location', refusalLocation(error))
        .send();
    }
  });
}
