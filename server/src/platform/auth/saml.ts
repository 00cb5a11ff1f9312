/**
 * The service-provider half of SAML 2.0 Web Browser SSO (samlify): the identity provider's
 * metadata read and checked, our metadata, the authentication request sent with the HTTP-Redirect
 * binding, the answer taken with the HTTP-POST binding, and the single logout request.
 *
 * An answer is accepted only when its status is success, its assertion comes encrypted to our
 * encryption certificate when we store one (decrypted with its key before any other check), a
 * signature that covers the assertion verifies with the identity provider's signing certificate
 * (samlify refuses other certificates and wrapped assertions, and checks the answer against the
 * SAML schemas: saml-schema.ts), the assertion's issuer
 * is the identity provider, its audience is our entity id, the answer's destination and the
 * subject confirmation's recipient are our assertion consumer service, both name our request in
 * InResponseTo, and now lies within the assertion's NotBefore/NotOnOrAfter and before the
 * confirmation's NotOnOrAfter, with at most CLOCK_SKEW_SECONDS of tolerance either way. Whether
 * the assertion was seen before is the caller's check (it answers the assertion's id and how long
 * it stays acceptable).
 *
 * Metadata that cannot be read or names no redirect sign-on address or signing certificate is
 * SamlMetadataError; an identity provider that cannot be reached, or an answer whose schema check
 * could not run, is SamlUnavailableError; an answer that fails a check is SamlRejectedError.
 */
import { createHash } from 'node:crypto';
import type { IdentityProviderInstance, ServiceProviderInstance } from 'samlify';
import { samlSchemaValidator, SchemaValidatorUnavailableError } from './saml-schema.ts';
import { lazyModule } from '../lib/lazy-module.ts';

/**
 * samlify, loaded by the first SAML call (a portal without SAML providers does not hold it), with
 * our schema check. It is CommonJS: its members come from the default export under Node's ESM
 * loader.
 */
export const samlLibrary = lazyModule(async () => {
  const { default: samlify } = await import('samlify');
  samlify.setSchemaValidator(samlSchemaValidator);
  return samlify;
});
export type Samlify = Awaited<ReturnType<typeof samlLibrary>>;

/** Tolerated clock difference with the identity provider, in seconds. */
export const CLOCK_SKEW_SECONDS = 60;
const HTTP_TIMEOUT_MS = 10_000;
const MAX_METADATA_BYTES = 262_144;

export class SamlMetadataError extends Error {}
export class SamlUnavailableError extends Error {}
export class SamlRejectedError extends Error {}

type IdentityProviderSettings = Parameters<Samlify['IdentityProvider']>[0];
type ServiceProviderSettings = Parameters<Samlify['ServiceProvider']>[0];

/** What the portal needs of an identity provider's metadata. */
export interface IdpSummary {
  entityId: string;
  singleLogout: boolean;
}

/** A provider as the protocol sees it: both sides' settings. */
export interface SamlParties {
  idpMetadata: string;
  spEntityId: string;
  spCertificate: string | null;
  spPrivateKey: string | null;
  /** our encryption certificate and its key: with both, assertions must come encrypted to us */
  spEncryptionCertificate: string | null;
  spEncryptionPrivateKey: string | null;
  /** our assertion consumer service and single logout addresses */
  acsUrl: string;
  sloUrl: string;
}

/** The identity provider of a metadata document (`settings` adds what its metadata cannot say). */
export function identityProvider(
  lib: Samlify,
  metadata: string,
  settings: Omit<IdentityProviderSettings, 'metadata'> = {},
): IdentityProviderInstance {
  return lib.IdentityProvider({ ...settings, metadata });
}

/** Whether the identity provider's assertions must come encrypted to our encryption certificate. */
export const encrypts = (parties: SamlParties): boolean =>
  !!(parties.spEncryptionCertificate && parties.spEncryptionPrivateKey);

/**
 * Our side: requests are signed when the identity provider asks for it (samlify refuses a signed
 * request to one that does not), with our key when one is stored; `settings` adds a message's own
 * expectations (a signed logout request).
 */
export function serviceProvider(
  lib: Samlify,
  parties: SamlParties,
  idp?: IdentityProviderInstance,
  relayState?: string,
  settings: Pick<ServiceProviderSettings, 'wantLogoutRequestSigned'> = {},
): ServiceProviderInstance {
  const { redirect: REDIRECT, post: POST } = lib.Constants.namespace.binding;
  const hasKey = !!(parties.spCertificate && parties.spPrivateKey);
  const signs = hasKey && (!idp || idp.entityMeta.isWantAuthnRequestsSigned());
  return lib.ServiceProvider({
    entityID: parties.spEntityId,
    assertionConsumerService: [{ Binding: POST, Location: parties.acsUrl }],
    singleLogoutService: [{ Binding: REDIRECT, Location: parties.sloUrl }],
    wantAssertionsSigned: true,
    authnRequestsSigned: signs,
    ...(hasKey
      ? { signingCert: parties.spCertificate ?? '', privateKey: parties.spPrivateKey ?? '' }
      : {}),
    ...(encrypts(parties)
      ? {
          encryptCert: parties.spEncryptionCertificate ?? '',
          encPrivateKey: parties.spEncryptionPrivateKey ?? '',
          isAssertionEncrypted: true,
        }
      : {}),
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    clockDrifts: [-CLOCK_SKEW_SECONDS * 1000, CLOCK_SKEW_SECONDS * 1000],
    ...(relayState ? { relayState } : {}),
    ...settings,
  });
}

export const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

/** The identity provider's metadata checked: an entity id, a redirect sign-on address, a certificate. */
export async function readIdpMetadata(xml: string): Promise<IdpSummary> {
  const lib = await samlLibrary();
  let idp: IdentityProviderInstance;
  try {
    idp = identityProvider(lib, xml);
  } catch (error) {
    throw new SamlMetadataError(`the metadata cannot be read: ${(error as Error).message}`);
  }
  const meta = idp.entityMeta;
  const entityId = textOf(meta.getEntityID());
  if (!entityId) throw new SamlMetadataError('the metadata names no entity id');
  if (!textOf(meta.getSingleSignOnService('redirect')))
    throw new SamlMetadataError('the metadata names no HTTP-Redirect single sign-on address');
  const certificate = meta.getX509Certificate('signing') as unknown;
  const certificates = [certificate].flat(2).filter((c) => textOf(c));
  if (certificates.length === 0)
    throw new SamlMetadataError('the metadata has no signing certificate');
  return { entityId, singleLogout: !!textOf(meta.getSingleLogoutService('redirect')) };
}

/** The identity provider's metadata read from its address. */
export async function fetchIdpMetadata(url: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' },
      redirect: 'follow',
    });
  } catch (error) {
    throw new SamlUnavailableError(`${url}: ${(error as Error).message}`);
  }
  if (!res.ok) throw new SamlUnavailableError(`${url} answered ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_METADATA_BYTES) throw new SamlMetadataError('the metadata is too large');
  return text;
}

/** Our metadata, for the identity provider's administrator. */
export async function spMetadata(parties: SamlParties): Promise<string> {
  return serviceProvider(await samlLibrary(), parties).getMetadata();
}

/** Where the browser is sent to sign in (HTTP-Redirect binding), and our request's id. */
export async function loginRequest(
  parties: SamlParties,
  relayState: string,
): Promise<{ requestId: string; location: string }> {
  const lib = await samlLibrary();
  const idp = identityProvider(lib, parties.idpMetadata);
  if (
    idp.entityMeta.isWantAuthnRequestsSigned() &&
    !(parties.spCertificate && parties.spPrivateKey)
  )
    throw new SamlMetadataError('the identity provider wants signed requests and no key is stored');
  const sp = serviceProvider(lib, parties, idp, relayState);
  const { id, context } = sp.createLoginRequest(idp, 'redirect');
  return { requestId: id, location: context };
}

/** Where the browser is sent to end the identity provider's session, when it has such an address. */
export async function logoutRequest(
  parties: SamlParties,
  nameId: string,
  relayState: string,
): Promise<string | undefined> {
  const lib = await samlLibrary();
  const idp = identityProvider(lib, parties.idpMetadata);
  if (!textOf(idp.entityMeta.getSingleLogoutService('redirect'))) return undefined;
  const sp = serviceProvider(lib, parties, idp, relayState);
  return sp.createLogoutRequest(idp, 'redirect', { logoutNameID: nameId }).context;
}

/** What a verified assertion says. */
export interface SamlAssertion {
  issuer: string;
  assertionId: string;
  nameId: string;
  attributes: Record<string, unknown>;
  /** until when the assertion could be accepted (the replay record lasts that long) */
  acceptableUntil: Date;
}

const first = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);
const asRecord = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' ? (value as Record<string, unknown>) : {};

/** The time of an attribute, refused when present and not a date. */
function instant(value: unknown, name: string): number | undefined {
  const text = textOf(value);
  if (!text) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new SamlRejectedError(`${name} is not a date`);
  return at;
}

/**
 * The answer the browser posted, verified for our request (see the module's rule). samlify
 * verifies the status, the signature, the issuer and the Conditions' window; the rest is checked
 * on the assertion that the signature covers.
 */
export async function verifyLoginResponse(
  parties: SamlParties,
  samlResponse: string,
  requestId: string,
): Promise<SamlAssertion> {
  const lib = await samlLibrary();
  const idp = identityProvider(lib, parties.idpMetadata, {
    isAssertionEncrypted: encrypts(parties),
  });
  const sp = serviceProvider(lib, parties, idp);
  let samlContent: string;
  let extracted: Record<string, unknown>;
  try {
    const parsed = (await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: samlResponse },
    })) as { samlContent: string; extract: Record<string, unknown> };
    samlContent = parsed.samlContent;
    extracted = parsed.extract;
  } catch (error) {
    if (error instanceof SchemaValidatorUnavailableError)
      throw new SamlUnavailableError(error.message);
    throw new SamlRejectedError(error instanceof Error ? error.message : String(error));
  }
  // an encrypted assertion is checked as the identity provider signed it: decrypted
  let signedContent = samlContent;
  if (encrypts(parties)) {
    try {
      [signedContent] = await lib.SamlLib.decryptAssertion(sp, samlContent);
    } catch (error) {
      throw new SamlRejectedError(error instanceof Error ? error.message : String(error));
    }
  }
  const [verified, assertion] = lib.SamlLib.verifySignature(signedContent, {
    metadata: idp.entityMeta,
  });
  if (!verified || !assertion) throw new SamlRejectedError('no signed assertion');
  const own = lib.Extractor.extract(assertion, [
    { key: 'assertion', localPath: ['Assertion'], attributes: ['ID'] },
    {
      key: 'confirmation',
      localPath: ['Assertion', 'Subject', 'SubjectConfirmation', 'SubjectConfirmationData'],
      attributes: ['Recipient', 'InResponseTo', 'NotBefore', 'NotOnOrAfter'],
    },
    {
      key: 'conditions',
      localPath: ['Assertion', 'Conditions'],
      attributes: ['NotBefore', 'NotOnOrAfter'],
    },
  ]) as Record<string, unknown>;
  if (Array.isArray(own.confirmation) || Array.isArray(own.conditions))
    throw new SamlRejectedError('the assertion has several subject confirmations or conditions');
  const response = asRecord(extracted.response);
  const confirmation = asRecord(own.confirmation);
  const conditions = asRecord(own.conditions);
  const assertionId = textOf(own.assertion);
  const issuer = textOf(first(extracted.issuer));
  const nameId = textOf(first(extracted.nameID));
  if (!assertionId || !issuer || !nameId)
    throw new SamlRejectedError('the assertion is incomplete');

  const audiences = [extracted.audience].flat().map(textOf);
  if (!audiences.includes(parties.spEntityId))
    throw new SamlRejectedError('the assertion is for another audience');
  if (response.destination !== undefined && response.destination !== parties.acsUrl)
    throw new SamlRejectedError('the answer is for another destination');
  if (confirmation.recipient !== parties.acsUrl)
    throw new SamlRejectedError('the assertion is for another recipient');
  if (confirmation.inResponseTo !== requestId || (response.inResponseTo ?? requestId) !== requestId)
    throw new SamlRejectedError('the answer is not to our request');

  const now = Date.now();
  const skew = CLOCK_SKEW_SECONDS * 1000;
  const notBefore = [
    instant(conditions.notBefore, 'NotBefore'),
    instant(confirmation.notBefore, 'NotBefore'),
  ];
  const notAfter = [
    instant(conditions.notOnOrAfter, 'NotOnOrAfter'),
    instant(confirmation.notOnOrAfter, 'NotOnOrAfter'),
  ].filter((t): t is number => t !== undefined);
  if (confirmation.notOnOrAfter === undefined)
    throw new SamlRejectedError('the subject confirmation has no NotOnOrAfter');
  if (notBefore.some((t) => t !== undefined && now + skew < t))
    throw new SamlRejectedError('the assertion is not valid yet');
  if (notAfter.some((t) => now - skew >= t)) throw new SamlRejectedError('the assertion expired');

  return {
    issuer,
    assertionId,
    nameId,
    attributes: asRecord(extracted.attributes),
    acceptableUntil: new Date(Math.max(...notAfter) + skew),
  };
}

/** The replay record's key of an assertion: a digest of its issuer and id. */
export const assertionKey = (assertion: Pick<SamlAssertion, 'issuer' | 'assertionId'>): string =>
  createHash('sha256').update(`${assertion.issuer}\n${assertion.assertionId}`).digest('hex');
