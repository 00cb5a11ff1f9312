/**
 * SAML 2.0 sign-in through a category's identity provider (platform/auth/saml.ts speaks the
 * protocol).
 *
 * The start stores a sign-in under way (saml_logins: a single-use relay state, the id of our
 * authentication request, the provider and the page to return to, for ten minutes), binds it to
 * the browser with an HttpOnly cookie holding the relay state, and sends the browser to the
 * identity provider with the HTTP-Redirect binding. The assertion consumer service takes the
 * sign-in out of the table (so a relay state works once, whatever happens next), checks the
 * cookie, verifies the answer for that request, and records the assertion (saml_assertions): an
 * assertion already recorded is refused. The person is then the account of provider `saml` whose
 * uid is the assertion's NameID, in the provider's category or the one its category attribute
 * guesses among the providers of the same identity provider and service provider entity
 * (./sso-accounts.ts: registration into the mapped role and the groups the group attribute names,
 * a registration code, the choice among several categories). A provider no longer enabled is
 * `user_disallowed`. Every refusal leaves no session.
 *
 * A logout of such an account goes on through the identity provider's single logout address when
 * its metadata names one; the identity provider sends the browser back to our SLO address, which
 * leads to the login page.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { eq, lt } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  assertionKey,
  loginRequest,
  logoutRequest,
  SamlMetadataError,
  SamlRejectedError,
  SamlUnavailableError,
  spMetadata,
  verifyLoginResponse,
  type SamlParties,
} from '../../platform/auth/saml.ts';
import {
  samlAssertions,
  samlLogins,
  samlProviders,
  type UserRow,
} from '../../platform/db/schema.ts';
import {
  categorySamlProvider,
  enabledSamlProvider,
  samlSiblings,
  type SamlProviderConfig,
} from '../directory/index.ts';
import {
  mappingOf,
  ssoSignIn,
  textsOf,
  type SsoMapping,
  type SsoOutcome,
  type SsoPerson,
} from './sso-accounts.ts';
import { linkBase } from './links.ts';
import { safeRedirect } from './oidc-login.ts';

/** The provider name of the accounts a SAML identity provider registers. */
export const SAML_PROVIDER = 'saml';

/** The cookie that binds a sign-in under way to the browser that started it. */
export const SAML_STATE_COOKIE = 'saml_state';
export const ACS_PATH = '/authentication/saml/acs';
export const SLO_PATH = '/authentication/saml/slo';
const SIGN_IN_SECONDS = 600;

/** Both sides' settings of a provider, our addresses under the portal's public address. */
export function partiesOf(
  app: FastifyInstance,
  request: FastifyRequest,
  config: SamlProviderConfig,
): SamlParties {
  const base = linkBase(app, request);
  return {
    idpMetadata: config.idpMetadata,
    spEntityId: config.spEntityId,
    spCertificate: config.spCertificate,
    spPrivateKey: config.spPrivateKey,
    spEncryptionCertificate: config.spEncryptionCertificate,
    spEncryptionPrivateKey: config.spEncryptionPrivateKey,
    acsUrl: new URL(ACS_PATH, base).toString(),
    sloUrl: new URL(SLO_PATH, base).toString(),
  };
}

const stateInvalid = () =>
  new ApiError('invalid_token', 'This sign-in expired or was already used', 'saml_state_invalid');
const responseInvalid = () =>
  new ApiError('invalid_token', 'The sign-in could not be verified', 'saml_response_invalid');
const notEnabled = () =>
  new ApiError('bad_request', 'Provider saml is not enabled', 'provider_not_enabled', {
    provider: SAML_PROVIDER,
  });

/** Our metadata for a provider (whether enabled or not: its administrator configures it first). */
export async function sendSpMetadata(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  providerId: string,
) {
  const [config] = await app.db
    .select()
    .from(samlProviders)
    .where(eq(samlProviders.id, providerId));
  if (!config) throw new ApiError('not_found', 'SAML provider not found', 'not_found');
  return reply
    .type('application/samlmetadata+xml; charset=utf-8')
    .send(await spMetadata(partiesOf(app, request, config)));
}

/** Answers the 302 to the provider's sign-on address, with the cookie that binds the sign-in. */
export async function sendSamlStart(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  providerId: string,
  redirect: string | undefined,
) {
  const config = await enabledSamlProvider(app.db, providerId);
  if (!config) throw notEnabled();
  const relayState = randomBytes(32).toString('base64url');
  let started;
  try {
    started = await loginRequest(partiesOf(app, request, config), relayState);
  } catch (error) {
    if (!(error instanceof SamlMetadataError)) throw error;
    request.log.warn({ reason: error.message }, 'SAML sign-in cannot start');
    throw new ApiError('service_unavailable', error.message, 'saml_unavailable');
  }
  const { requestId, location } = started;
  await app.db.delete(samlLogins).where(lt(samlLogins.expiresAt, new Date()));
  await app.db.insert(samlLogins).values({
    relayState,
    providerId: config.id,
    requestId,
    redirect: safeRedirect(redirect),
    expiresAt: new Date(Date.now() + SIGN_IN_SECONDS * 1000),
  });
  // The answer comes back as a cross-site POST: over HTTPS the cookie must be SameSite=None.
  const sameSite = request.protocol === 'https' ? 'None; Secure' : 'Lax';
  const cookie = `${SAML_STATE_COOKIE}=${relayState}; Path=${ACS_PATH}; Max-Age=${SIGN_IN_SECONDS}; HttpOnly; SameSite=${sameSite}`;
  return reply.code(302).header('set-cookie', cookie).header('location', location).send();
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The first non-empty text of an attribute (a name mapped to nothing gives null). */
function attributeText(attributes: Record<string, unknown>, name: string | null): string | null {
  if (!name) return null;
  const values = [attributes[name]].flat();
  const value = values.find((v): v is string => typeof v === 'string' && v.trim() !== '');
  return value?.trim() ?? null;
}

/** The mapping of the category's enabled provider, for a sign-in continued there. */
export async function samlMapping(
  app: FastifyInstance,
  categoryId: string,
): Promise<SsoMapping | undefined> {
  const config = await categorySamlProvider(app.db, categoryId);
  return config ? mappingOf(config) : undefined;
}

/** The account (or the login step) the verified assertion leads to (./sso-accounts.ts). */
async function outcomeOf(
  app: FastifyInstance,
  request: FastifyRequest,
  config: SamlProviderConfig,
  nameId: string,
  attributes: Record<string, unknown>,
): Promise<SsoOutcome> {
  const username = (attributeText(attributes, config.attrUsername) ?? nameId).slice(0, 128);
  const person: SsoPerson = {
    uid: nameId,
    username,
    name: (attributeText(attributes, config.attrName) ?? username).slice(0, 255),
    email: attributeText(attributes, config.attrEmail)?.toLowerCase() ?? null,
    photo: null,
    ...(config.attrGroups ? { groups: textsOf(attributes[config.attrGroups]) } : {}),
  };
  const guess = config.categoryAttribute
    ? {
        values: textsOf(attributes[config.categoryAttribute]),
        offers: (await samlSiblings(app.db, config.idpEntityId, config.spEntityId)).map(mappingOf),
      }
    : undefined;
  return ssoSignIn(app, request, SAML_PROVIDER, person, mappingOf(config), guess);
}

/**
 * The account an identity provider's answer signs in, and where the browser goes afterwards.
 * Refusals are thrown before any session exists.
 */
export async function finishSamlLogin(
  app: FastifyInstance,
  request: FastifyRequest,
  body: { SAMLResponse: string; RelayState: string },
): Promise<{ outcome: SsoOutcome; redirect: string }> {
  const [pending] = await app.db
    .delete(samlLogins)
    .where(eq(samlLogins.relayState, body.RelayState))
    .returning();
  if (!pending || pending.expiresAt.getTime() < Date.now()) throw stateInvalid();
  if (cookieOf(request, SAML_STATE_COOKIE) !== body.RelayState) throw stateInvalid();
  const config = await enabledSamlProvider(app.db, pending.providerId);
  if (!config) throw new ApiError('user_disallowed', undefined, 'user_disallowed');
  let assertion;
  try {
    assertion = await verifyLoginResponse(
      partiesOf(app, request, config),
      body.SAMLResponse,
      pending.requestId,
    );
  } catch (error) {
    if (error instanceof SamlUnavailableError) {
      request.log.error({ reason: error.message }, 'SAML answer not checked');
      throw new ApiError(
        'service_unavailable',
        'The sign-in cannot be checked now',
        'saml_unavailable',
      );
    }
    if (!(error instanceof SamlRejectedError)) throw error;
    request.log.warn({ reason: error.message }, 'SAML sign-in refused');
    throw responseInvalid();
  }
  await app.db.delete(samlAssertions).where(lt(samlAssertions.expiresAt, new Date()));
  const [recorded] = await app.db
    .insert(samlAssertions)
    .values({ key: assertionKey(assertion), expiresAt: assertion.acceptableUntil })
    .onConflictDoNothing()
    .returning();
  if (!recorded) {
    request.log.warn({ assertion: assertion.assertionId }, 'SAML assertion replayed');
    throw responseInvalid();
  }
  const outcome = await outcomeOf(app, request, config, assertion.nameId, assertion.attributes);
  return { outcome, redirect: pending.redirect };
}

/** Where a logout of this account continues: the identity provider's single logout, if any. */
export async function samlLogoutLocation(
  app: FastifyInstance,
  request: FastifyRequest,
  user: Pick<UserRow, 'provider' | 'categoryId' | 'uid'>,
): Promise<string | undefined> {
  if (user.provider !== SAML_PROVIDER) return undefined;
  const config = await categorySamlProvider(app.db, user.categoryId);
  if (!config?.idpSlo) return undefined;
  const relayState = randomBytes(16).toString('base64url');
  return logoutRequest(partiesOf(app, request, config), user.uid, relayState);
}
