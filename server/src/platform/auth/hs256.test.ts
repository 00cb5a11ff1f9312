/**
 * HS256 on node:crypto: tokens it signs verify with jose and tokens jose signs verify with it (the
 * sessions out before an upgrade stay valid); a token changed anywhere after signing, or whose
 * header asks for anything but plain HS256, is refused before any claim is read; time claims are
 * checked with the leeway, an expired token's payload is given only after its signature verified.
 */
import { describe, expect, it } from 'vitest';
import { jwtVerify, SignJWT } from 'jose';
import { headerOf, JwtRefused, signHs256, verifyHs256, type JwtPayload } from './hs256.ts';

const secret = new TextEncoder().encode('a-test-signing-key-of-enough-length-for-hs256');
const now = Math.floor(Date.now() / 1000);
const claims = { kid: 'isardvdi', sub: 'u1', session_id: 's1', iat: now, nbf: now, exp: now + 600 };

const check = (token: string, leeway = 0): JwtPayload =>
  verifyHs256(headerOf(token).parts, secret, leeway);
const refusal = (token: string, leeway = 0): JwtRefused | undefined => {
  try {
    check(token, leeway);
    return undefined;
  } catch (err) {
    if (err instanceof JwtRefused) return err;
    throw err;
  }
};
const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('HS256 tokens', () => {
  it('reads the tokens jose signs and signs tokens jose reads', async () => {
    const byJose = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'initial' })
      .sign(secret);
    expect(check(byJose)).toEqual(claims);
    expect(headerOf(byJose).kid).toBe('initial');
    const ours = signHs256(claims, secret, 'initial');
    expect((await jwtVerify(ours, secret, { algorithms: ['HS256'] })).payload).toEqual(claims);
  });

  it('refuses a tampered token and any header but plain HS256', () => {
    const token = signHs256(claims, secret, 'initial');
    const [head = '', body = '', signature = ''] = token.split('.');
    const other = signHs256(claims, new TextEncoder().encode('another-key-of-length'), 'initial');
    const forged = [
      `${head}.${part({ ...claims, sub: 'admin' })}.${signature}`,
      `${head}.${body}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`,
      `${head}.${body}.${signature}A`,
      `${head}.${body.replace(/[A-Za-z]/, (c) => String.fromCharCode(c.charCodeAt(0) + 256))}.${signature}`,
      `${head}.${body}.${other.split('.')[2] ?? ''}`,
      `${part({ alg: 'none', typ: 'JWT' })}.${body}.`,
      `${part({ alg: 'HS512', typ: 'JWT' })}.${body}.${signature}`,
      `${part({ alg: 'HS256', crit: ['exp'], exp: 1 })}.${body}.${signature}`,
      `${part({ alg: 'HS256', b64: false, crit: ['b64'] })}.${body}.${signature}`,
      `${head}.${body}`,
      `${token}.${signature}`,
    ];
    for (const bad of forged) expect(refusal(bad)?.reason, bad).toBe('invalid');
    expect(() => headerOf(`${part({ alg: 'HS256', kid: 7 })}.${body}.${signature}`)).toThrow(
      JwtRefused,
    );
    expect(refusal(signHs256({ ...claims, exp: String(now + 600) }, secret, 'k'))?.reason).toBe(
      'invalid',
    );
    expect(refusal(signHs256([] as unknown as JwtPayload, secret, 'k'))?.reason).toBe('invalid');
  });

  it('checks nbf and exp with the leeway, and reports an authentic expired payload', () => {
    const early = signHs256({ ...claims, nbf: now + 100 }, secret, 'k');
    expect(refusal(early, 60)?.reason).toBe('invalid');
    expect(check(early, 120)).toMatchObject({ sub: 'u1' });
    const late = signHs256({ ...claims, exp: now - 30 }, secret, 'k');
    expect(check(late, 60)).toMatchObject({ sub: 'u1' });
    const expired = refusal(late, 10);
    expect(expired?.reason).toBe('expired');
    expect(expired?.payload).toMatchObject({ sub: 'u1', exp: now - 30 });
  });
});
