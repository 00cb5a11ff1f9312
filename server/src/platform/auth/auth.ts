/**
 * Authentication of API requests: bearer JWT verified (HS256,
 * kid, exp with 60 s leeway), special token types refused with 403, the session row checked on
 * every request (cached briefly), the user's CURRENT role read from the database, maintenance 503
 * for non-admins. Cookies are never credentials.
 *
 * A bearer starting with the API-key prefix is an API key instead: its hash is looked up on every
 * request (no cache, so a revoked key stops at once), an unknown, expired or inactive owner's key
 * is one and the same 401, and the request then acts as the owner with the role, category and
 * group the owner has NOW, under a session that exists only for this request. A key opens no
 * socket, and it may not call the /authentication routes nor the few calls that change the
 * account itself (password and e-mail, moving its items to another account): those take a login.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.ts';
import { globalPlugin } from '../lib/plugin.ts';
import {
  bearerOf,
  isLoginClaims,
  TokenService,
  type Claims,
  type SpecialClaims,
} from './tokens.ts';
import { openKeyRing } from './signing-keys.ts';
import { API_KEY_SESSION_ID, apiKeyHash, isWellFormedApiKey, looksLikeApiKey } from './api-keys.ts';
import type { AuthIdentity } from './auth-context.ts';
import type { SessionState } from './sessions-repository.ts';
import { operations } from '../../../../src/generated/api.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

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
  interface FastifyContextConfig {
    /** the operation-table key of the route (set by platform/http/route.ts) */
    operation?: string;
    /** a planned operation answering 501 (set by platform/http/route.ts) */
    planned?: boolean;
  }
  interface FastifyInstance {
    tokens: TokenService;
    /**
     * Adds a new token signing key, which every node signs with from now on (tokens signed
     * before stay valid); answers its id.
     */
    rotateSigningKey(): Promise<string>;
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

/** Calls on /api/v3 that change the account itself: an API key may not make them. */
const LOGIN_ONLY_OPERATIONS: ReadonlySet<string> = new Set([
  'profile.update',
  'profile.sendVerification',
  'profile.exportMigration',
  'profile.importMigration',
  'profile.migrate',
]);

const baseOf: ReadonlyMap<string, string> = new Map(
  Object.values(operations).map((op) => [op.key, op.base]),
);

/** True when the route's operation takes a login token and never an API key. */
function needsLogin(request: FastifyRequest): boolean {
  const key = request.routeOptions.config.operation;
  if (key === undefined) return true;
  const base = baseOf.get(key);
  return base === undefined || base === 'auth' || LOGIN_ONLY_OPERATIONS.has(key);
}

interface ApiKeyOwnerRow {
  id: string;
  role: Role;
  category_id: string;
  group_id: string;
  name: string;
  provider: string;
  api_key_expires: Date | string;
}

/** The time an API-key session reports for its renew and end limits: none (epoch 0). */
const NO_LIMIT = new Date(0);

const plugin: FastifyPluginAsync = async (app) => {
  // The keys are in the database, the same for every node; a rotation on one node reaches the others.
  const keys = await openKeyRing(app.database.query, app.config.dataDir);
  const tokens = new TokenService(keys, app.config.clockLeeway);
  app.decorate('tokens', tokens);
  const reloadKeys = () =>
    keys.reload().catch((err: unknown) => app.log.warn({ err }, 'signing keys not read again'));
  app.cluster.on('signing-keys.changed', reloadKeys);
  app.cluster.on('resync', reloadKeys);
  app.decorate('rotateSigningKey', async () => {
    const id = await keys.rotate();
    app.cluster.publish({ kind: 'signing-keys.changed' });
    return id;
  });
  app.decorateRequest('auth', null);
  app.decorateRequest('specialToken', null);

  app.decorate(
    'authenticate',
    async function authenticate(request: FastifyRequest, options: AuthenticateOptions = {}) {
      const token = bearerOf(request.headers.authorization);
      if (!token)
        throw new ApiError('unauthorized', 'Authorization header is expected', 'missing_token');
      if (looksLikeApiKey(token)) {
        await authenticateApiKey(request, token, options);
        return;
      }
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
      await checkRoleAndMaintenance(session, options);
    },
  );

  async function checkRoleAndMaintenance(
    session: SessionState,
    options: AuthenticateOptions,
  ): Promise<void> {
    if (options.roles && !options.roles.includes(session.role)) {
      throw new ApiError('forbidden', 'Not enough rights.', 'forbidden');
    }
    if (
      !options.skipMaintenance &&
      !hasRoleAtLeast(session.role, role.admin) &&
      (await app.settings.maintenanceFor(session.categoryId))
    ) {
      throw new ApiError('service_unavailable', 'Under maintenance', 'maintenance');
    }
  }

  async function authenticateApiKey(
    request: FastifyRequest,
    key: string,
    options: AuthenticateOptions,
  ): Promise<void> {
    const invalid = () => new ApiError('unauthorized', 'Invalid API key', 'invalid_token');
    if (!isWellFormedApiKey(key)) throw invalid();
    // One statement whatever is wrong with the key: unknown, expired, inactive and an owner whose
    // role may no longer hold keys look the same.
    const rows = await app.database.query<ApiKeyOwnerRow>(
      `SELECT id, role, category_id, group_id, name, provider, api_key_expires FROM users
       WHERE api_key_hash = $1 AND api_key_expires > now() AND active`,
      [apiKeyHash(key)],
    );
    const owner = rows[0];
    // The owner's role now, not when the key was made: a role that may not hold keys ends them.
    if (!owner || !app.access.roleSets.profile?.apiKey?.includes(owner.role)) throw invalid();
    if (needsLogin(request))
      throw new ApiError(
        'forbidden',
        'An API key is not valid for this operation: log in.',
        'login_token_required',
      );
    const expires =
      owner.api_key_expires instanceof Date
        ? owner.api_key_expires
        : new Date(owner.api_key_expires);
    const session: SessionState = {
      id: API_KEY_SESSION_ID,
      userId: owner.id,
      role: owner.role,
      categoryId: owner.category_id,
      groupId: owner.group_id,
      name: owner.name,
      provider: owner.provider,
      active: true,
      expiresAt: expires,
      maxRenewAt: NO_LIMIT,
      maxAt: NO_LIMIT,
      revokedAt: null,
    };
    request.auth = {
      userId: owner.id,
      sessionId: API_KEY_SESSION_ID,
      role: owner.role,
      categoryId: owner.category_id,
      groupId: owner.group_id,
      name: owner.name,
      provider: owner.provider,
      session,
      token: key,
    };
    await checkRoleAndMaintenance(session, options);
  }
};

export default globalPlugin(plugin, 'auth');
