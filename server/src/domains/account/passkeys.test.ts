/**
 * Passkeys through the built app, with a software authenticator written here (a P-256 key of
 * node:crypto, `none` attestation, CBOR and authenticator data built by hand): two passkeys
 * added from the profile (one renamed, one removed), a login whose second step is passed by a
 * passkey, then the refusals, each with our error body and no session: a replayed assertion, a
 * wrong origin, a counter that goes backwards, an expired challenge and a used one; five refusals
 * lock the step like wrong codes; an admin's factor reset removes the passkeys.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { userRow } from '../../../test/support/fixtures.ts';

const ORIGIN = 'https://vdi.example.org';
const RP_ID = 'vdi.example.org';

// --- a software authenticator -------------------------------------------------------------

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
class SoftKey {
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

// --- the portal -------------------------------------------------------------------------------

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), { publicUrl: ORIGIN });
});
afterAll(async () => {
  await t.close();
});

const call = (
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
) =>
  injectWithToken(t.app, token, {
    method,
    url,
    headers: { origin: ORIGIN },
    ...(payload ? { payload } : {}),
  });

const continueLogin = (token: string) =>
  call(token, 'POST', '/authentication/login?provider=form&category_id=default');

/** A password login that stops at the second step; answers its token. */
async function passwordStep(username: string): Promise<string> {
  const res = await loginRequest(t.app, username);
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The challenge of a second step's passkey options. */
async function stepChallenge(step: string): Promise<string> {
  const options = await call(step, 'POST', '/authentication/second-factor/passkey/options', {});
  expect(options.statusCode).toBe(200);
  return options.json<{ challenge: string }>().challenge;
}

const answerStep = (step: string, response: object) =>
  call(step, 'POST', '/authentication/second-factor/passkey', { response });

/** A refusal with our error body, after which the step token opens no session. */
async function expectRefused(step: string, response: object) {
  const refused = await answerStep(step, response);
  expect(refused.statusCode).toBe(400);
  expectErrorShape(refused.json(), 'bad_request');
  expect(refused.json()).toMatchObject({ description_code: 'passkey_invalid' });
  expect((await continueLogin(step)).statusCode).toBe(403);
}

describe('passkeys', () => {
  const key = new SoftKey();
  let usedChallenge = '';

  it('are added from the profile (several, named), renamed and removed', async () => {
    const token = await login(t.app, 'user');
    const enrol = async (soft: SoftKey, name: string) => {
      const started = await call(
        token,
        'POST',
        '/authentication/passkeys/registration-options',
        {},
      );
      expect(started.statusCode).toBe(200);
      const options = started.json<{ challenge: string; rp: { id: string } }>();
      expect(options.rp.id).toBe(RP_ID);
      const answer = soft.attest(options.challenge);
      const done = await call(token, 'POST', '/authentication/passkeys', {
        name,
        response: answer,
      });
      expect(done.statusCode).toBe(200);
      // the challenge worked once
      const again = await call(token, 'POST', '/authentication/passkeys', {
        name,
        response: answer,
      });
      expect(again.statusCode).toBe(400);
      expect(again.json()).toMatchObject({ description_code: 'passkey_invalid' });
      return done.json<{ id: string }>().id;
    };
    const first = await enrol(key, 'Laptop');
    const second = await enrol(new SoftKey(), 'Phone');
    expect((await call(token, 'GET', '/api/v3/user/profile')).json()).toMatchObject({
      second_factor: { totp: false, passkeys: 2 },
    });
    const renamed = await call(token, 'PUT', `/authentication/passkeys/${first}`, {
      name: 'Work laptop',
    });
    expect(renamed.statusCode).toBe(200);
    expect((await call(token, 'DELETE', `/authentication/passkeys/${second}`)).statusCode).toBe(
      200,
    );
    const list = await call(token, 'GET', '/authentication/passkeys');
    expect(list.json()).toEqual([
      { id: first, name: 'Work laptop', created_at: expect.any(Number), last_used_at: null },
    ]);
  });

  it('pass the second login step; the step token then opens one session', async () => {
    const step = await passwordStep('user');
    expect(decodePayload(step).type).toBe('second-factor-required');
    const methods = await call(step, 'GET', '/authentication/second-factor/methods');
    expect(methods.json()).toEqual({ passkey: true, totp: false });
    usedChallenge = await stepChallenge(step);
    expect((await answerStep(step, key.assert(usedChallenge, 1))).statusCode).toBe(200);
    const session = await continueLogin(step);
    expect(session.statusCode).toBe(200);
    expect(decodePayload(session.body).type).toBeUndefined();
    expect((await continueLogin(step)).statusCode).toBe(403);
  });

  it('refuse a replay, another origin, a counter going back, an expired or used challenge', async () => {
    // the assertion that passed, sent again in a new login
    const replayed = await passwordStep('user');
    await stepChallenge(replayed);
    await expectRefused(replayed, key.assert(usedChallenge, 1));

    const step = await passwordStep('user');
    await expectRefused(step, key.assert(await stepChallenge(step), 2, 'https://evil.example.org'));
    await expectRefused(step, key.assert(await stepChallenge(step), 0));
    const expiring = await stepChallenge(step);
    await t.app.db.execute(
      sql`UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE challenge = ${expiring}`,
    );
    await expectRefused(step, key.assert(expiring, 3));
    // a fresh signature over the challenge of the login that passed
    await expectRefused(step, key.assert(usedChallenge, 4));

    // five refusals lock the step as five wrong codes do
    const locked = await call(step, 'POST', '/authentication/second-factor/passkey/options', {});
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBeDefined();
  });

  it('are removed by an admin’s factor reset, audited', async () => {
    const user = await userRow(t.app, 'user');
    await t.app.loginThrottle.succeed(`second-factor:${user.id}`);
    const admin = await login(t.app, 'admin');
    const reset = await call(admin, 'DELETE', `/api/v3/admin/users/${user.id}/second-factors`);
    expect(reset.statusCode).toBe(200);
    const [entry] = (await call(admin, 'GET', '/api/v3/admin/audit')).json<
      { action: string; before: object }[]
    >();
    expect(entry).toMatchObject({
      action: 'adminUsers.resetSecondFactors',
      before: { second_factors: ['passkey'] },
    });
    expect(decodePayload(await passwordStep('user')).type).toBeUndefined();
  });
});
