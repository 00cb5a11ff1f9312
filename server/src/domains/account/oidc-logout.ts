/**
 * Logout through the OpenID Connect provider (RP-initiated logout): the ID token of a person's
 * latest sign-in is kept (oidc_id_tokens) as the hint; when the session of an `oidc` account ends
 * and the provider of its category publishes an `end_session_endpoint` in its discovery document,
 * the logout answers that address with `id_token_hint`, `client_id` and a
 * `post_logout_redirect_uri` back to the portal's login page, and the SPA goes there. The kept
 * token is dropped at logout. A provider that cannot be reached, or has no such endpoint, leaves
 * the logout local.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { eq } from 'drizzle-orm';
import { discover, OidcUnavailableError } from '../../platform/auth/oidc.ts';
import type { LoginClaims } from '../../platform/auth/tokens.ts';
import { oidcIdTokens } from '../../platform/db/schema.ts';
import { enabledOidcProvider } from '../directory/index.ts';
import { linkBase } from './links.ts';

/** Keeps the ID token of the person's sign-in (the hint of their logout). */
export async function rememberIdToken(app: FastifyInstance, userId: string, idToken: string) {
  await app.db
    .insert(oidcIdTokens)
    .values({ userId, idToken })
    .onConflictDoUpdate({ target: oidcIdTokens.userId, set: { idToken, updatedAt: new Date() } });
}

/** The logout's answer: the provider's end-session address for an `oidc` session, when it has one. */
export async function oidcLogout(
  app: FastifyInstance,
  request: FastifyRequest,
  claims: LoginClaims,
): Promise<{ redirect?: string }> {
  if (claims.data.provider !== 'oidc') return {};
  const [kept] = await app.db
    .delete(oidcIdTokens)
    .where(eq(oidcIdTokens.userId, claims.sub))
    .returning();
  const config = await enabledOidcProvider(app.db, claims.data.category_id);
  if (!config) return {};
  let endpoint: URL;
  try {
    const metadata = await discover(config.issuer);
    if (!metadata.end_session_endpoint) return {};
    endpoint = new URL(metadata.end_session_endpoint);
  } catch (error) {
    if (!(error instanceof OidcUnavailableError) && !(error instanceof TypeError)) throw error;
    request.log.warn({ reason: (error as Error).message }, 'OpenID Connect logout stays local');
    return {};
  }
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') return {};
  if (kept) endpoint.searchParams.set('id_token_hint', kept.idToken);
  endpoint.searchParams.set('client_id', config.clientId);
  endpoint.searchParams.set(
    'post_logout_redirect_uri',
    new URL('/login', linkBase(app, request)).toString(),
  );
  return { redirect: endpoint.toString() };
}
