/**
 * The two WebAuthn ceremonies of passkeys (@simplewebauthn/server), bound to the portal:
 * - the relying party is the origin the browser is on when the portal accepts it as its own (the
 *   websockets' Origin rule: PUBLIC_URL, else the listening address, ALLOWED_ORIGINS, and behind
 *   TRUST_PROXY the forwarded origin), else the public origin; its id is that origin's host name;
 * - options carry a single-use challenge of two minutes, stored with that origin and relying party
 *   (and for a login step the step token's jti), so any portal node finishes the ceremony;
 * - an answer is checked against its stored challenge, origin and relying party (taking the
 *   challenge, so it works once), attestation `none`, user presence; a login's signature must
 *   come from one of the user's passkeys with a counter that moves forward.
 * Every refusal is 400 `passkey_invalid` (the reason goes to the log only).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { ApiError } from '../../platform/http/api-error.ts';
import { lazyModule } from '../../platform/lib/lazy-module.ts';
import { listeningPort, originAllowed, ownOrigins } from '../../platform/lib/origins.ts';
import {
  addPasskey,
  openCeremony,
  passkeyByCredential,
  passkeysOf,
  recordPasskeyUse,
  takeCeremony,
  WEBAUTHN_CHALLENGE_SECONDS,
  type CeremonyPurpose,
  type RelyingParty,
} from '../../platform/auth/passkeys.ts';
import type {
  WebAuthnAuthenticationResponse,
  WebAuthnRegistrationResponse,
} from '../../../../src/generated/types.ts';
import { TOTP_ISSUER } from './second-factor.ts';

/**
 * The WebAuthn library, loaded by the first ceremony (some 25 MB that a portal whose users have no
 * passkeys need not hold).
 */
const webAuthn = lazyModule(() => import('@simplewebauthn/server'));

export const passkeyInvalid = () =>
  new ApiError('bad_request', 'The passkey could not be verified', 'passkey_invalid');

/** The relying party of a request (rules above). */
export function relyingPartyOf(app: FastifyInstance, request: FastifyRequest): RelyingParty {
  const port = listeningPort(app.server, app.config.port);
  const asked = request.headers.origin;
  const origin =
    typeof asked === 'string' && originAllowed(request.raw, app.config, port)
      ? new URL(asked).origin
      : (ownOrigins(app.config, port)[0] ?? `http://localhost:${port}`);
  return { origin, rpId: new URL(origin).hostname };
}

/** The challenge a browser's answer signed (from its client data), else undefined. */
function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' && challenge !== '' ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the ceremony an answer belongs to: 400 passkey_invalid when there is none. */
async function ceremonyOf(
  app: FastifyInstance,
  userId: string,
  purpose: CeremonyPurpose,
  clientDataJSON: string,
) {
  const challenge = challengeOf(clientDataJSON);
  const ceremony = challenge && (await takeCeremony(app.db, userId, purpose, challenge));
  if (!ceremony) throw passkeyInvalid();
  return ceremony;
}

/** Runs a library check; any failure is 400 passkey_invalid, its reason logged. */
async function verified<T>(request: FastifyRequest, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    request.log.info({ reason: (error as Error).message }, 'passkey refused');
    throw passkeyInvalid();
  }
}

/**
 * The options to add a passkey for the user (the passkeys they have are excluded); bound to the
 * step token `stepJti` for an enrolment at the login, else to the profile.
 */
export async function registrationOptions(
  app: FastifyInstance,
  request: FastifyRequest,
  user: { id: string; username: string; name: string },
  stepJti: string | null = null,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingPartyOf(app, request);
  const existing = await passkeysOf(app.db, user.id);
  const { generateRegistrationOptions } = await webAuthn();
  const options = await generateRegistrationOptions({
    rpName: TOTP_ISSUER,
    rpID: rp.rpId,
    userName: user.username,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: user.name,
    timeout: WEBAUTHN_CHALLENGE_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({
      id: p.credentialId,
      transports: p.transports,
    })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await openCeremony(app.db, {
    ...rp,
    challenge: options.challenge,
    userId: user.id,
    purpose: 'registration',
    stepJti,
  });
  return options;
}

/**
 * Verifies and stores a new passkey made for options of the same binding (`stepJti`, as
 * registrationOptions): its id, or 409 passkey_exists for a known credential.
 */
export async function registerPasskey(
  app: FastifyInstance,
  request: FastifyRequest,
  userId: string,
  name: string,
  answer: WebAuthnRegistrationResponse,
  stepJti: string | null = null,
): Promise<string> {
  const ceremony = await ceremonyOf(app, userId, 'registration', answer.response.clientDataJSON);
  if (ceremony.stepJti !== stepJti) throw passkeyInvalid();
  const response: RegistrationResponseJSON = { ...answer, clientExtensionResults: {} };
  const { verifyRegistrationResponse } = await webAuthn();
  const result = await verified(request, () =>
    verifyRegistrationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: ceremony.origin,
      expectedRPID: ceremony.rpId,
      requireUserVerification: false,
    }),
  );
  if (!result.verified) throw passkeyInvalid();
  const { credential } = result.registrationInfo;
  const id = await addPasskey(app.db, {
    userId,
    name,
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: answer.response.transports ?? [],
  });
  if (!id) throw new ApiError('conflict', 'The passkey is registered already', 'passkey_exists');
  return id;
}

/** The options of a login step's passkey, bound to the step token's jti. */
export async function authenticationOptions(
  app: FastifyInstance,
  request: FastifyRequest,
  userId: string,
  stepJti: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const existing = await passkeysOf(app.db, userId);
  if (existing.length === 0)
    throw new ApiError('conflict', 'The user has no passkey', 'passkey_none');
  const rp = relyingPartyOf(app, request);
  const { generateAuthenticationOptions } = await webAuthn();
  const options = await generateAuthenticationOptions({
    rpID: rp.rpId,
    allowCredentials: existing.map((p) => ({
      id: p.credentialId,
      transports: p.transports,
    })),
    timeout: WEBAUTHN_CHALLENGE_SECONDS * 1000,
    userVerification: 'preferred',
  });
  await openCeremony(app.db, {
    ...rp,
    challenge: options.challenge,
    userId,
    purpose: 'authentication',
    stepJti,
  });
  return options;
}

/**
 * Verifies a login step's passkey signature for the step token `stepJti` and records the
 * counter; 400 passkey_invalid otherwise.
 */
export async function verifyWebAuthnAssertion(
  app: FastifyInstance,
  request: FastifyRequest,
  userId: string,
  stepJti: string,
  answer: WebAuthnAuthenticationResponse,
): Promise<void> {
  const ceremony = await ceremonyOf(app, userId, 'authentication', answer.response.clientDataJSON);
  if (ceremony.stepJti !== stepJti) throw passkeyInvalid();
  const passkey = await passkeyByCredential(app.db, userId, answer.id);
  if (!passkey) throw passkeyInvalid();
  const response: AuthenticationResponseJSON = { ...answer, clientExtensionResults: {} };
  const { verifyAuthenticationResponse } = await webAuthn();
  const result = await verified(request, () =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: ceremony.origin,
      expectedRPID: ceremony.rpId,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    }),
  );
  if (!result.verified) throw passkeyInvalid();
  if (!(await recordPasskeyUse(app.db, passkey, result.authenticationInfo.newCounter)))
    throw passkeyInvalid();
}
