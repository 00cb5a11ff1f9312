/**
 * The browser side of WebAuthn (@simplewebauthn/browser), loaded only when a passkey is added or
 * used: never with the login form. The server's options are checked for their shape before they
 * reach the browser's API.
 */
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import type { WebAuthnRegister } from '@/generated/types';

export const loadWebAuthn = () => import('@simplewebauthn/browser');

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null;

/** Options for navigator.credentials.create(): a challenge, the relying party, the user, the algorithms. */
export function isCreationOptions(value: unknown): value is PublicKeyCredentialCreationOptionsJSON {
  return (
    isObject(value) &&
    typeof value.challenge === 'string' &&
    isObject(value.rp) &&
    isObject(value.user) &&
    Array.isArray(value.pubKeyCredParams)
  );
}

/** Options for navigator.credentials.get(): a challenge. */
export function isRequestOptions(value: unknown): value is PublicKeyCredentialRequestOptionsJSON {
  return isObject(value) && typeof value.challenge === 'string';
}

/**
 * Runs the browser's side of a registration ceremony for the server's `options`: the body that
 * stores the new passkey under `name`.
 */
export async function createPasskey(options: unknown, name: string): Promise<WebAuthnRegister> {
  if (!isCreationOptions(options)) throw new Error('passkey registration: no options');
  const { startRegistration } = await loadWebAuthn();
  const response = await startRegistration({ optionsJSON: options });
  return {
    name,
    response: {
      id: response.id,
      rawId: response.rawId,
      type: 'public-key',
      clientExtensionResults: {},
      ...(response.authenticatorAttachment
        ? { authenticatorAttachment: response.authenticatorAttachment }
        : {}),
      response: {
        clientDataJSON: response.response.clientDataJSON,
        attestationObject: response.response.attestationObject,
        ...(response.response.transports ? { transports: response.response.transports } : {}),
      },
    },
  };
}
