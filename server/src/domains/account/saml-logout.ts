/**
 * The single logout an identity provider starts: its signed LogoutRequest to our single logout
 * address (platform/auth/saml-logout.ts checks it) ends the portal sessions of the person it names
 * (the accounts of provider `saml` whose uid is its NameID, in the categories of that identity
 * provider's enabled providers) on every node, through the sessions' revocation, and the browser
 * goes back to the identity provider with our LogoutResponse, signed with the key of one of those
 * providers when one has ours (to the login page when it names no single logout address). A request that is not signed, or whose signature or other checks fail,
 * is refused with `saml_logout_invalid` and ends nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { SamlRejectedError, SamlUnavailableError } from '../../platform/auth/saml.ts';
import {
  logoutRequestIssuer,
  logoutResponseLocation,
  verifyLogoutRequest,
  type SamlLogoutRequest,
} from '../../platform/auth/saml-logout.ts';
import { samlProvidersOfIdp, type SamlProviderConfig } from '../directory/index.ts';
import { partiesOf, SAML_PROVIDER } from './saml-login.ts';

const logoutInvalid = () =>
  new ApiError('invalid_token', 'The logout request could not be verified', 'saml_logout_invalid');

/** The query of the identity provider's logout request, as the route's schema admits it. */
export interface SamlLogoutQuery {
  SAMLRequest: string;
  RelayState?: string;
  SigAlg?: string;
  Signature?: string;
}

/** The request verified with the metadata of one of the issuer's providers, and that provider. */
async function verifiedRequest(
  app: FastifyInstance,
  request: FastifyRequest,
  configs: SamlProviderConfig[],
  query: SamlLogoutQuery,
): Promise<{ verified: SamlLogoutRequest; config: SamlProviderConfig }> {
  const rawQuery = (request.raw.url ?? '').split('?')[1] ?? '';
  let reason = 'no provider of that identity provider is enabled';
  // a provider with our key first: its answer is signed
  const hasKey = (c: SamlProviderConfig) => (c.spCertificate && c.spPrivateKey ? 1 : 0);
  for (const config of [...configs].sort((a, b) => hasKey(b) - hasKey(a))) {
    try {
      const verified = await verifyLogoutRequest(
        partiesOf(app, request, config),
        { ...query },
        rawQuery,
      );
      return { verified, config };
    } catch (error) {
      if (error instanceof SamlUnavailableError) {
        request.log.error({ reason: error.message }, 'SAML logout request not checked');
        throw new ApiError(
          'service_unavailable',
          'The logout cannot be checked now',
          'saml_unavailable',
        );
      }
      if (!(error instanceof SamlRejectedError)) throw error;
      reason = error.message;
    }
  }
  request.log.warn({ reason }, 'SAML logout request refused');
  throw logoutInvalid();
}

/** Ends the sessions the identity provider's logout request names, and answers it (see above). */
export async function answerIdpLogout(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  query: SamlLogoutQuery,
) {
  const issuer = await logoutRequestIssuer(query.SAMLRequest);
  const configs = issuer ? await samlProvidersOfIdp(app.db, issuer) : [];
  const { verified, config } = await verifiedRequest(app, request, configs, query);
  const categories = [...new Set(configs.map((c) => c.categoryId))];
  for (const categoryId of categories) {
    const account = await app.users.findByProvider(verified.nameId, categoryId, SAML_PROVIDER);
    if (account) await app.sessions.revokeUser(account.id);
  }
  request.log.info(
    { issuer: verified.issuer, categories },
    'SAML logout from the identity provider',
  );
  const location = await logoutResponseLocation(
    partiesOf(app, request, config),
    verified.requestId,
    query.RelayState ?? '',
  );
  return reply
    .code(302)
    .header('location', location ?? '/login')
    .send();
}
