/**
 * /authentication: form login for local accounts with persistent
 * throttling, continuation tokens (disclaimer, password reset required), renew, logout, check,
 * providers, acknowledge-disclaimer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/api-error.ts';
import { verifyPassword } from '../../lib/passwords.ts';
import { route } from '../../lib/route.ts';
import { bearerOf, isLoginClaims, TokenService } from '../../lib/tokens.ts';
import { accountKey } from '../../plugins/app/login-throttle.ts';
import type { UserRow } from '../../db/schema.ts';
import type { SessionState } from '../../plugins/app/sessions-repository.ts';
import type { SessionUserTokenData } from '../../../../src/generated/types.ts';

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

function tooManyRequests(until: Date): ApiError {
  const httpDate = until.toUTCString();
  return new ApiError(
    'too_many_requests',
    `Retry after: ${httpDate}`,
    'too_many_requests',
    { retry_after: until.toISOString() },
    {
      headers: { 'retry-after': httpDate },
    },
  );
}

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

  const sendToken = (request: FastifyRequest, reply: FastifyReply, jwt: string, maxAge: number) => {
    const secure = request.protocol === 'https' ? '; Secure' : '';
    return reply
      .header('cache-control', 'no-store')
      .header('authorization', `Bearer ${jwt}`)
      .header(
        'set-cookie',
        `authorization=${jwt}; Path=/; Max-Age=${maxAge}; SameSite=Strict${secure}`,
      )
      .type('text/plain; charset=utf-8')
      .send(jwt);
  };

  /** finishLogin of the reference (4.1 step 5): account checks, then a session and a login token. */
  const finishLogin = async (user: UserRow, request: FastifyRequest, reply: FastifyReply) => {
    if (!user.active) throw new ApiError('user_disabled', 'Disabled user', 'user_disabled');
    const settings = await app.settings.all();
    if (settings.disclaimer_required && !user.disclaimerAcknowledged) {
      return sendToken(
        request,
        reply,
        await app.tokens.signSpecial('disclaimer-acknowledgement-required', user.id, 600),
        600,
      );
    }
    if (user.passwordResetRequired) {
      return sendToken(
        request,
        reply,
        await app.tokens.signSpecial('password-reset-required', user.id, 3600),
        3600,
      );
    }
    await app.users.touchAccessed(user.id);
    const session = await app.sessions.create(user.id, request.ip, times);
    const jwt = await app.tokens.signLogin({
      sessionId: session.id,
      userId: user.id,
      exp: epoch(session.expiresAt),
      data: tokenData(session),
    });
    return sendToken(request, reply, jwt, times.expiration);
  };

  route(app, 'session.login', async (request, reply) => {
    const query = request.query;
    // An absent form body is an empty form (route() turns it into {}; the schema checks the fields).
    const body = request.body;
    const bearer = bearerOf(request.headers.authorization);
    if (bearer) {
      const type = TokenService.peekType(bearer);
      if (type === 'disclaimer-acknowledgement-required' || type === 'password-reset-required') {
        const claims = await app.tokens.verify(bearer);
        if (isLoginClaims(claims) || claims.type !== type)
          throw new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');
        const user = await app.users.byId(claims.user_id);
        if (!user) throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
        return finishLogin(user, request, reply);
      }
      if (type === 'register' || type === 'category-select') {
        throw new ApiError(
          'bad_request',
          `The ${type} step is not available for local accounts`,
          'unsupported_token_type',
          { type },
        );
      }
      // login tokens and unknown types fall through to a normal provider login
    }
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
    const categoryId = query.category_id || body.category_id || 'default';
    const key = accountKey(username, categoryId, 'form');
    const banned = await app.loginThrottle.bannedUntil(key, request.ip);
    if (banned) throw tooManyRequests(banned);
    const user = await app.users.findLocal(username, categoryId);
    const ok = await verifyPassword(user?.passwordHash, password);
    if (!ok || !user) {
      const until = await app.loginThrottle.fail(key, request.ip);
      if (until) throw tooManyRequests(until);
      throw new ApiError('invalid_credentials', 'Invalid credentials', 'invalid_credentials');
    }
    await app.loginThrottle.succeed(key);
    return finishLogin(user, request, reply);
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
    return {};
  });

  route(app, 'session.check', async () => ({}), { skipMaintenance: true });

  route(app, 'session.providers', async () => ({ providers: ['form' as const] }));

  // Only the continuation token of a user who must accept the disclaimer: a login token is refused.
  route(app, 'session.acknowledgeDisclaimer', async (request) => {
    const claims = request.specialToken;
    if (!claims)
      throw new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');
    await app.users.update(claims.user_id, { disclaimerAcknowledged: true });
    return {};
  });
}
