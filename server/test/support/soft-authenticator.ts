/**
 * A software authenticator for the passkey tests (a P-256 key of node:crypto, `none` attestation,
 * CBOR and authenticator data built by hand), for the relying party ORIGIN / RP_ID.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export const ORIGIN = 'https://vdi.example.org';
export const RP_ID = 'vdi.example.org';

/** CBOR (RFC 8949) of the few shapes WebAuthn needs: integers, byte and text strings, maps. */
function cbor(value: number | string | Uint8Array | Map<number | string, unknown>): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
    if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const parts = [head(5, value.size)];
  for (const [k, v] of value)
    parts.push(cbor(k), cbor(v as number | string | Uint8Array | Map<number | string, unknown>));
  return Buffer.concat(parts);
}

const b64url = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** One credential of a software authenticator: a P-256 key pair and its id. */
export class SoftKey {
  readonly id = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly cose: Buffer;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key: kty EC2, alg ES256, crv P-256, x, y
    this.cose = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    );
  }

  /** rpIdHash | flags (user present) | counter [| attested credential data] */
  private authData(counter: number, attested: boolean): Buffer {
    const head = Buffer.alloc(37);
    sha256(RP_ID).copy(head, 0);
    head[32] = attested ? 0x41 : 0x01;
    head.writeUInt32BE(counter, 33);
    if (!attested) return head;
    const length = Buffer.alloc(2);
    length.writeUInt16BE(this.id.length);
    return Buffer.concat([head, Buffer.alloc(16), length, this.id, this.cose]);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** What navigator.credentials.create() answers, as JSON (attestation `none`). */
  attest(challenge: string, origin = ORIGIN) {
    const attestationObject = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', this.authData(0, true)],
      ]),
    );
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', challenge, origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /** What navigator.credentials.get() answers, as JSON: a signature with `counter`. */
  assert(challenge: string, counter: number, origin = ORIGIN) {
    const authenticatorData = this.authData(counter, false);
    const clientDataJSON = this.clientData('webauthn.get', challenge, origin);
    const signature = sign(
      'sha256',
      Buffer.concat([authenticatorData, sha256(clientDataJSON)]),
      this.privateKey,
    );
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
      },
    };
  }
}
