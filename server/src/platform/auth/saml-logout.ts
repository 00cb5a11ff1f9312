/**
 * The single logout an identity provider starts (SAML 2.0, HTTP-Redirect binding): its
 * LogoutRequest to our single logout address, and our LogoutResponse back to its own.
 *
 * A request is accepted only when it is signed (the binding's detached signature over its
 * SAMLRequest, RelayState and SigAlg, in the order and encoding the address carries them) and the
 * signature verifies with the identity provider's signing certificate, its issuer is the identity
 * provider, its destination (when named) is our single logout address, it names a subject, and it
 * was issued within LOGOUT_REQUEST_SECONDS (CLOCK_SKEW_SECONDS of tolerance either way). Our
 * answer is signed with our key when one is stored.
 *
 * A request that fails a check is SamlRejectedError; one whose schema check could not run is
 * SamlUnavailableError.
 */
import { inflateRawSync } from 'node:zlib';
import {
  CLOCK_SKEW_SECONDS,
  identityProvider,
  samlLibrary,
  SamlRejectedError,
  SamlUnavailableError,
  serviceProvider,
  textOf,
  type SamlParties,
} from './saml.ts';
import { SchemaValidatorUnavailableError } from './saml-schema.ts';

/** How old a logout request may be when it arrives (seconds). */
export const LOGOUT_REQUEST_SECONDS = 300;

/** The parameters a redirect binding's signature covers, in their order. */
const SIGNED_PARAMETERS = ['SAMLRequest', 'RelayState', 'SigAlg'] as const;

/** What a verified logout request says. */
export interface SamlLogoutRequest {
  requestId: string;
  issuer: string;
  nameId: string;
}

/**
 * What the signature of a redirect binding's query covers: its signed parameters as the address
 * carries them (still percent-encoded), in the binding's order.
 */
export function signedOctets(rawQuery: string): string {
  const raw = new Map(
    rawQuery
      .split('&')
      .map((pair) => pair.split('='))
      .map(([name = '', ...value]) => [name, value.join('=')] as const),
  );
  return SIGNED_PARAMETERS.filter((name) => raw.has(name))
    .map((name) => `${name}=${raw.get(name) ?? ''}`)
    .join('&');
}

/** The issuer a logout request names (read before any check: it picks the metadata to check with). */
export async function logoutRequestIssuer(samlRequest: string): Promise<string | undefined> {
  const lib = await samlLibrary();
  let xml: string;
  try {
    xml = inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('utf8');
  } catch {
    return undefined;
  }
  try {
    const { issuer } = lib.Extractor.extract(xml, [
      { key: 'issuer', localPath: ['LogoutRequest', 'Issuer'], attributes: [] },
    ]) as { issuer?: unknown };
    return textOf([issuer].flat()[0]);
  } catch {
    return undefined;
  }
}

/** The identity provider's logout request, verified (see the module's rule). */
export async function verifyLogoutRequest(
  parties: SamlParties,
  query: Record<string, string | undefined>,
  rawQuery: string,
): Promise<SamlLogoutRequest> {
  const lib = await samlLibrary();
  const idp = identityProvider(lib, parties.idpMetadata);
  const sp = serviceProvider(lib, parties, idp, undefined, { wantLogoutRequestSigned: true });
  let extracted: Record<string, unknown>;
  try {
    const parsed = (await sp.parseLogoutRequest(idp, 'redirect', {
      query,
      octetString: signedOctets(rawQuery),
    })) as { extract: Record<string, unknown> };
    extracted = parsed.extract;
  } catch (error) {
    if (error instanceof SchemaValidatorUnavailableError)
      throw new SamlUnavailableError(error.message);
    throw new SamlRejectedError(error instanceof Error ? error.message : String(error));
  }
  const request = (extracted.request ?? {}) as Record<string, unknown>;
  const requestId = textOf(request.id);
  const issuer = textOf([extracted.issuer].flat()[0]);
  const nameId = textOf([extracted.nameID].flat()[0]);
  if (!requestId || !issuer || !nameId)
    throw new SamlRejectedError('the logout request is incomplete');
  if (issuer !== idp.entityMeta.getEntityID())
    throw new SamlRejectedError('the logout request is from another issuer');
  const destination = textOf(request.destination);
  if (destination !== undefined && destination !== parties.sloUrl)
    throw new SamlRejectedError('the logout request is for another destination');
  const issued = Date.parse(textOf(request.issueInstant) ?? '');
  const skew = CLOCK_SKEW_SECONDS * 1000;
  const now = Date.now();
  if (
    Number.isNaN(issued) ||
    issued > now + skew ||
    issued < now - skew - LOGOUT_REQUEST_SECONDS * 1000
  )
    throw new SamlRejectedError('the logout request is not current');
  return { requestId, issuer, nameId };
}

/**
 * Where the browser is sent with our answer to a logout request (signed when we have a key), or
 * undefined when the identity provider names no HTTP-Redirect single logout address.
 */
export async function logoutResponseLocation(
  parties: SamlParties,
  requestId: string,
  relayState: string,
): Promise<string | undefined> {
  const lib = await samlLibrary();
  const signs = !!(parties.spCertificate && parties.spPrivateKey);
  const idp = identityProvider(lib, parties.idpMetadata, { wantLogoutResponseSigned: signs });
  if (!textOf(idp.entityMeta.getSingleLogoutService('redirect'))) return undefined;
  const sp = serviceProvider(lib, parties, idp);
  return sp.createLogoutResponse(idp, { extract: { request: { id: requestId } } }, 'redirect', {
    relayState,
  }).context;
}
