/**
 * /authentication: form login (local accounts, then the category's LDAP directory) with persistent
 * throttling, OpenID Connect and SAML sign-in (./oidc.ts, ./saml.ts), its continuation
 * tokens (register, category-select, disclaimer, email address, password reset, second factor),
 * renew, logout, check, providers, acknowledge-disclaimer; the mail flows live in
 * ./account-mail.ts, the second factor's calls in ./second-factor.ts.
 */
import { availableParallelism } from 'node:os';
import { createPasswordGate } from '../../../platform/auth/password-gate.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { verifyPassword } from '../../../platform/auth/passwords.ts';
import { route } from '../../../platform/http/route.ts';
import { tooManyRequests as rateLimited } from '../../../platform/http/rate-limit.ts';
import {
  bearerOf,
  isLoginClaims,
  TokenService,
  type SpecialTokenType,
} from '../../../platform/auth/tokens.ts';
import { accountKey } from '../../../platform/auth/login-throttle.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import type { SessionState } from '../../../platform/auth/sessions-repository.ts';
import type { SessionUserTokenData } from '../../../../../src/generated/types.ts';
import { passwordExpired, policyFor } from '../../../platform/auth/password-policy.ts';
import {
  asCategorySelect,
  asRegister,
  CATEGORY_SELECT_SECONDS,
  LOGIN_STEP_SECONDS,
  specialTokenOf,
} from '../account-tokens.ts';
import accountMailRoutes from './account-mail.ts';
import { ldapMapping, ldapSignIn } from '../ldap-login.ts';
import { continueSsoChoice, ssoChoiceOf, type SsoOutcome } from '../sso-accounts.ts';
import { oidcMapping, sendOidcStart } from '../oidc-login.ts';
import { samlMapping } from '../saml-login.ts';
import { oidcLogout } from '../oidc-logout.ts';
import oidcRoutes from './oidc.ts';
import samlRoutes, { samlLogout } from './saml.ts';
import { loginProviders } from './login-providers.ts';
import {
  SECOND_FACTOR_TYPES,
  secondFactorStepOf,
  signSecondFactorStep,
  takePassedChallenge,
  type SecondFactorStepType,
} from '../second-factor.ts';
import secondFactorRoutes from './second-factor.ts';
import passkeyRoutes from './passkeys.ts';
import { sendToken } from './send-token.ts';

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

/** Continuation tokens a login step answers; the same token continues the login once it is done. */
const STEP_TYPES: readonly SpecialTokenType[] = [
  'disclaimer-acknowledgement-required',
  'email-verification-required',
  'password-reset-required',
];

/** How long a step's token lasts (seconds): the address and password steps may need a mail. */
const STEP_SECONDS: Partial<Record<SpecialTokenType, number>> = {
  'disclaimer-acknowledgement-required': LOGIN_STEP_SECONDS,
  'email-verification-required': 3600,
  'password-reset-required': 3600,
};

const tooManyRequests = (until: Date) => rateLimited({ retry: { until } });

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

const invalidCredentials = () =>
  new ApiError('invalid_credentials', 'Invalid credentials', 'invalid_credentials');

export default async function authenticationRoutes(app: FastifyInstance) {
  const times = {
    expiration: app.config.sessionExpiration,
    maxRenew: app.config.sessionMaxRenew,
    maxTime: app.config.sessionMaxTime,
  };

  const tokenData = (
    s: Pick<SessionState, 'provider' | 'userId' | 'role' | 'categoryId' | 'groupId' | 'name'>,
  ): SessionUserTokenData => ({
    provider: s.provider === 'local' ? 'form' : s.provider,
    user_id: s.userId,
    role_id: s.role,
    category_id: s.categoryId,
    group_id: s.groupId,
    name: s.name,
  });

  const sendStep = async (
    request: FastifyRequest,
    reply: FastifyReply,
    type: SpecialTokenType,
    userId: string,
    redirect?: string,
  ) => {
    const seconds = STEP_SECONDS[type] ?? LOGIN_STEP_SECONDS;
    const jwt = await app.tokens.signSpecial(type, userId, seconds);
    return sendToken(request, reply, jwt, seconds, redirect);
  };

  /**
   * The account checks of a login, in order: a disabled account is refused; then, per the user's
   * account policy, a disclaimer not yet accepted, an address not yet verified, and a password
   * that must change (flagged, or older than the policy's expiration for local accounts) each
   * answer their step's token; then, unless this login just passed it, the second factor (a
   * code, or an enrolment the policy requires); otherwise a session and its login token. Every
   * provider's sign-in ends here; a browser sent back by a provider gets the token as a cookie on
   * its way to `redirect`.
   */
  const finishLogin = async (
    user: UserRow,
    request: FastifyRequest,
    reply: FastifyReply,
    redirect?: string,
    secondFactorPassed = false,
  ) => {
    if (!user.active) throw new ApiError('user_disabled', 'Disabled user', 'user_disabled');
    const settings = await app.settings.all();
    const policy = policyFor(settings.account_policies, {
      categoryId: user.categoryId,
      role: user.role,
      provider: user.provider,
    });
    if (policy?.disclaimer && !user.disclaimerAcknowledged)
      return sendStep(request, reply, 'disclaimer-acknowledgement-required', user.id, redirect);
    if (policy?.email_verification && !user.emailVerified)
      return sendStep(request, reply, 'email-verification-required', user.id, redirect);
    if (
      user.passwordResetRequired ||
      (user.provider === 'local' && passwordExpired(policy?.password, user.passwordLastUpdated))
    )
      return sendStep(request, reply, 'password-reset-required', user.id, redirect);
    const factorStep = secondFactorPassed
      ? undefined
      : await secondFactorStepOf(app, user.id, policy);
    if (factorStep) {
      const { token, seconds } = await signSecondFactorStep(app, factorStep, user.id);
      return sendToken(request, reply, token, seconds, redirect);
    }
    await app.users.touchAccessed(user.id);
    const session = await app.sessions.create(user.id, request.ip, times);
    const jwt = await app.tokens.signLogin({
      sessionId: session.id,
      userId: user.id,
      iat: epoch(session.periodStart),
      exp: epoch(session.expiresAt),
      data: tokenData(session),
    });
    return sendToken(request, reply, jwt, times.expiration, redirect);
  };

  /** A directory's or provider's sign-in: its account logs in, or its step's token answers. */
  const finishOutcome = (outcome: SsoOutcome, request: FastifyRequest, reply: FastifyReply) =>
    'step' in outcome
      ? sendToken(request, reply, outcome.step.token, outcome.step.seconds)
      : finishLogin(outcome.user, request, reply);

  /** A step token continues the login of its user (the remaining checks still apply). */
  const continueStep = async (
    type: SpecialTokenType,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const claims = await specialTokenOf(app, request, [type]);
    const user = await app.users.byId(claims.user_id);
    if (!user) throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
    return finishLogin(user, request, reply);
  };

  /**
   * A second-step token continues its login once its code passed (or its enrolment was
   * confirmed): that uses the step up. A code step not passed is refused; an enrolment step not
   * confirmed answers the step again.
   */
  const continueSecondFactor = async (
    type: SecondFactorStepType,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const claims = await specialTokenOf(app, request, [type]);
    const user = await app.users.byId(claims.user_id);
    if (!user) throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
    const passed = await takePassedChallenge(app, claims);
    if (!passed && type === 'second-factor-required') throw invalidToken();
    return finishLogin(user, request, reply, undefined, passed);
  };

  /**
   * The register link logs in the account the registration made with it, once: the account keeps
   * the link's jti until this login uses it.
   */
  const continueRegister = async (request: FastifyRequest, reply: FastifyReply) => {
    const claims = asRegister(await specialTokenOf(app, request, ['register']));
    const user =
      claims.provider === 'local'
        ? await app.users.findLocal(claims.username, claims.category_id)
        : await app.users.findByProvider(claims.uid, claims.category_id, claims.provider);
    if (!user)
      throw new ApiError('unauthorized', 'The account is not registered yet', 'invalid_token');
    if (!(await app.users.useEmailVerification(user.id, claims.jti))) throw invalidToken();
    return finishLogin({ ...user, emailVerificationJti: null }, request, reply);
  };

  /** The category chosen from a category-select token (one of its categories). */
  const continueCategorySelect = async (
    categoryId: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const claims = asCategorySelect(await specialTokenOf(app, request, ['category-select']));
    if (!categoryId || !claims.categories.some((c) => c.id === categoryId)) throw invalidToken();
    const choice = ssoChoiceOf(claims);
    if (choice) {
      const mappingOf = { ldap: ldapMapping, oidc: oidcMapping, saml: samlMapping };
      const mapping = await mappingOf[choice.provider](app, categoryId);
      return finishOutcome(await continueSsoChoice(app, request, choice, mapping), request, reply);
    }
    const user = await app.users.findLocal(claims.username, categoryId);
    if (!user) throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
    return finishLogin(user, request, reply);
  };

  /**
   * A form login without a category: the username is looked up in every category. One account
   * whose password matches logs in; several answer a category-select token listing their
   * categories. Failures count against every account of that name (or the name alone when none).
   */
  const loginAnyCategory = async (
    username: string,
    password: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const accounts = await app.users.findLocalEverywhere(username);
    const keys = accounts.length
      ? [...new Set(accounts.map((a) => accountKey(username, a.categoryId, 'form')))]
      : [accountKey(username, '*', 'form')];
    for (const key of keys) {
      const banned = await app.loginThrottle.bannedUntil(key, request.ip);
      if (banned) throw tooManyRequests(banned);
    }
    const matches: typeof accounts = [];
    if (accounts.length === 0) await verifyPassword(undefined, password);
    for (const account of accounts)
      if (await verifyPassword(account.passwordHash, password)) matches.push(account);
    if (matches.length === 0) {
      let until: Date | undefined;
      for (const key of keys) {
        const ban = await app.loginThrottle.fail(key, request.ip);
        if (ban && (!until || ban > until)) until = ban;
      }
      if (until) throw tooManyRequests(until);
      throw invalidCredentials();
    }
    for (const account of matches)
      await app.loginThrottle.succeed(accountKey(username, account.categoryId, 'form'));
    const [only] = matches;
    if (only && matches.length === 1) return finishLogin(only, request, reply);
    const token = await app.tokens.signSpecial(
      'category-select',
      username,
      CATEGORY_SELECT_SECONDS,
      {
        username,
        categories: matches.map((a) => ({ id: a.categoryId, name: a.categoryName })),
      },
    );
    return sendToken(request, reply, token, CATEGORY_SELECT_SECONDS);
  };

  // Form sign-ins run in a bounded pool (two per core: one hashing while the other waits for the
  // database); a storm beyond what it can answer within the budget is refused with 503 at once.
  const signIns = createPasswordGate({
    slots: 2 * availableParallelism(),
    budgetMs: app.config.passwordQueueBudgetMs,
  });

  route(app, 'session.login', async (request, reply) => {
    const query = request.query;
    // An absent form body is an empty form (route() turns it into {}; the schema checks the fields).
    const body = request.body;
    const categoryId = query.category_id || body.category_id || undefined;
    const bearer = bearerOf(request.headers.authorization);
    if (bearer) {
      const type = TokenService.peekType(bearer);
      const step = STEP_TYPES.find((t) => t === type);
      if (step) return continueStep(step, request, reply);
      const factorStep = SECOND_FACTOR_TYPES.find((t) => t === type);
      if (factorStep) return continueSecondFactor(factorStep, request, reply);
      if (type === 'register') return continueRegister(request, reply);
      if (type === 'category-select') return continueCategorySelect(categoryId, request, reply);
      // login tokens and unknown types fall through to a normal provider login
    }
    if (query.provider === 'oidc')
      return sendOidcStart(app, request, reply, categoryId, query.redirect);
    if (query.provider !== 'form') {
      throw new ApiError(
        'bad_request',
        `Provider ${query.provider} is not enabled`,
        'provider_not_enabled',
        { provider: query.provider },
      );
    }
    const username = body.username;
    const password = body.password;
    if (!username || !password)
      throw new ApiError(
        'bad_request',
        'username and password are required',
        'missing_required_data',
      );
    return signIns.run(async () => {
      if (!categoryId) return loginAnyCategory(username, password, request, reply);
      const key = accountKey(username, categoryId, 'form');
      const banned = await app.loginThrottle.bannedUntil(key, request.ip);
      if (banned) throw tooManyRequests(banned);
      const local = await app.users.findLocal(username, categoryId);
      const ok = await verifyPassword(local?.passwordHash, password);
      // local accounts first, then the category's directory when it has one enabled
      const outcome =
        ok && local
          ? { user: local }
          : await ldapSignIn(app, request, username, password, categoryId);
      if (!outcome) {
        const until = await app.loginThrottle.fail(key, request.ip);
        if (until) throw tooManyRequests(until);
        throw invalidCredentials();
      }
      await app.loginThrottle.succeed(key);
      return finishOutcome(outcome, request, reply);
    });
  });

  route(app, 'session.renew', async (_request, reply) => {
    const bearer = bearerOf(_request.headers.authorization);
    if (!bearer)
      throw new ApiError('missing_token', 'Authorization header is expected', 'missing_token');
    const claims = await app.tokens.verify(bearer, { allowExpired: true });
    if (!isLoginClaims(claims))
      throw new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');
    const session = await app.sessions.renew(claims.session_id, times);
    if (!session || session.userId !== claims.sub || !session.active) {
      throw new ApiError('invalid_session', 'Session cannot be renewed', 'session_expired');
    }
    const token = await app.tokens.signLogin({
      sessionId: session.id,
      userId: session.userId,
      iat: epoch(session.periodStart),
      exp: epoch(session.expiresAt),
      data: tokenData(session),
    });
    return reply.header('cache-control', 'no-store').send({ token });
  });

  route(app, 'session.logout', async (request) => {
    const bearer = bearerOf(request.headers.authorization);
    if (!bearer)
      throw new ApiError('missing_token', 'Authorization header is expected', 'missing_token');
    // An expired but authentic token still ends its session: otherwise it could be renewed later.
    const claims = await app.tokens.verify(bearer, { allowExpired: true });
    if (!isLoginClaims(claims))
      throw new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');
    await app.sessions.revoke(claims.session_id);
    // a session signed in through a provider also ends at the provider when it offers that
    return claims.data.provider === 'oidc'
      ? oidcLogout(app, request, claims)
      : samlLogout(app, request, claims.sub);
  });

  route(app, 'session.check', async () => ({}), { skipMaintenance: true });

  // The form is always there; a category's enabled LDAP directory signs in through it too, and
  // its enabled OpenID Connect provider through a button.
  route(app, 'session.providers', async () => loginProviders(app));

  // Only the continuation token of a user who must accept the disclaimer: a login token is refused.
  route(app, 'session.acknowledgeDisclaimer', async (request) => {
    const claims = request.specialToken;
    if (!claims) throw invalidToken();
    await app.users.acknowledgeDisclaimer(claims.user_id);
    return {};
  });

  await app.register(accountMailRoutes);
  for (const routes of [oidcRoutes, samlRoutes]) await app.register(routes, { finishLogin });
  await app.register(secondFactorRoutes);
  await app.register(passkeyRoutes);
}
