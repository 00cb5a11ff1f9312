/**
 * The caller's API key: made (PUT /authentication/api-key, with a login token only), its state
 * and its revocation. A new key replaces the previous one; only its hash and expiry are stored,
 * the key is answered once.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { apiKeyHash, newApiKey } from '../../../platform/auth/api-keys.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';

export default async function apiKeyRoutes(app: FastifyInstance) {
  route(app, 'profile.createApiKey', async (request) => {
    const auth = authOf(request);
    const key = newApiKey();
    await app.users.setApiKey(
      auth.userId,
      apiKeyHash(key),
      new Date(Date.now() + request.body.expiration_minutes * 60_000),
    );
    return { api_key: key };
  });

  route(app, 'profile.apiKey', async (request) => {
    const auth = authOf(request);
    const user = await app.users.byId(auth.userId);
    if (!user) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    const expires = user.apiKeyHash !== null ? user.apiKeyExpires : null;
    const live = expires !== null && expires.getTime() > Date.now();
    return { exists: live, expires: live ? Math.floor(expires.getTime() / 1000) : 0 };
  });

  route(app, 'profile.revokeApiKey', async (request) => {
    const auth = authOf(request);
    await app.users.setApiKey(auth.userId, null, null);
    return {};
  });
}
