/**
 * Authentication of API requests: bearer JWT verified (HS256,
 * kid, exp with 60 s leeway), special token types refused with 403, the session row checked on
 * every request (cached briefly), the user's CURRENT role read from the database, maintenance 503
 * for non-admins. Cookies are never credentials.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/api-error.ts';
import { globalPlugin } from '../../lib/plugin.ts';
import {
  bearerOf,
  isLoginClaims,
  loadSigningKey,
  TokenService,
  type Claims,
  type SpecialClaims,
} from '../../lib/tokens.ts';
import type { AuthIdentity } from '../../lib/auth-context.ts';
import type { SessionState } from './sessions-repository.ts';
import type { Role } from '../../../../src/generated/types.ts';

/** request.auth: the caller's identity and the session row it was read from. */
export interface AuthContext extends AuthIdentity {
  session: SessionState;
}

export interface AuthenticateOptions {
  /** roles allowed (null = any logged-in role) */
  roles?: readonly Role[] | null;
  /** special token types this route accepts (then request.specialToken is set instead of auth) */
  tokenTypes?: readonly string[];
  /** skip the maintenance 503 (GET /maintenance, /check) */
  skipMaintenance?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService;
    authenticate(request: FastifyRequest, options?: AuthenticateOptions): Promise<void>;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    specialToken: SpecialClaims | null;
  }
}

/** request.auth, or a 401 when the route forgot its access check. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth)
    throw new ApiError('unauthorized', 'Authorization header is expected', 'missing_token');
  return request.auth;
}

const plugin: FastifyPluginAsync = async (app) => {
  const tokens = new TokenService(loadSigningKey(app.config.dataDir), app.config.clockLeeway);
  app.decorate('tokens', tokens);
  app.decorateRequest('auth', null);
  app.decorateRequest('specialToken', null);

  app.decorate(
    'authenticate',
    async function authenticate(request: FastifyRequest, options: AuthenticateOptions = {}) {
      const token = bearerOf(request.headers.authorization);
      if (!token)
        throw new ApiError('unauthorized', 'Authorization header is expected', 'missing_token');
      const claims: Claims = await tokens.verify(token);
      if (!isLoginClaims(claims)) {
        if (options.tokenTypes?.includes(claims.type)) {
          request.specialToken = claims;
          return;
        }
        throw new ApiError('forbidden', 'Token not valid for this operation.', 'forbidden');
      }
      const session = await app.sessions.alive(claims.session_id);
      if (!session || session.userId !== claims.sub)
        throw new ApiError('unauthorized', 'Session expired', 'session_expired');
      request.auth = {
        userId: session.userId,
        sessionId: session.id,
        role: session.role,
        categoryId: session.categoryId,
        groupId: session.groupId,
        name: session.name,
        provider: session.provider,
        session,
        token,
      };
      if (options.roles && !options.roles.includes(session.role)) {
        throw new ApiError('forbidden', 'Not enough rights.', 'forbidden');
      }
      if (
        !options.skipMaintenance &&
        session.role !== 'admin' &&
        (await app.settings.maintenanceFor(session.categoryId))
      ) {
        throw new ApiError('service_unavailable', 'Under maintenance', 'maintenance');
      }
    },
  );
};

export default globalPlugin(plugin, 'auth');
