/**
 * TOTP against the RFC 6238 SHA-1 test vectors (their 8-digit codes, and the 6-digit codes the
 * portal uses, which are their last six digits), base32 round trips, the drift window, the
 * single use of a step, and the shape of recovery codes.
 */
import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  hotp,
  isRecoveryCodeShape,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  recoveryCodeHash,
  totpCode,
  totpStep,
} from './totp.ts';

const rfcKey = Buffer.from('12345678901234567890');
const rfcSecret = base32Encode(rfcKey);

describe('totp', () => {
  it('gives the RFC 6238 SHA-1 codes', () => {
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ];
    for (const [seconds, code] of vectors) {
      expect(hotp(rfcKey, totpStep(seconds * 1000), 8)).toBe(code);
      expect(totpCode(rfcSecret, seconds * 1000)).toBe(code.slice(2));
    }
  });

  it('round-trips base32 and makes 160-bit secrets', () => {
    expect(rfcSecret).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(base32Decode(rfcSecret.toLowerCase())).toEqual(rfcKey);
    expect(base32Decode(newTotpSecret())).toHaveLength(20);
    expect(() => base32Decode('A1')).toThrow();
  });

  it('accepts one step of drift, each step once, and nothing else', () => {
    const now = 1_700_000_000_000;
    const step = totpStep(now);
    const code = totpCode(rfcSecret, now);
    expect(matchTotp(rfcSecret, code, null, now)).toBe(step);
    expect(matchTotp(rfcSecret, code.slice(0, 3) + ' ' + code.slice(3), null, now)).toBe(step);
    expect(matchTotp(rfcSecret, code, step, now)).toBeUndefined();
    expect(matchTotp(rfcSecret, totpCode(rfcSecret, now - 30_000), null, now)).toBe(step - 1);
    expect(matchTotp(rfcSecret, totpCode(rfcSecret, now + 30_000), step, now)).toBe(step + 1);
    expect(matchTotp(rfcSecret, totpCode(rfcSecret, now - 60_000), null, now)).toBeUndefined();
    expect(matchTotp(rfcSecret, 'abcdef', null, now)).toBeUndefined();
  });

  it('writes the otpauth URI authenticator apps read', () => {
    const uri = new URL(otpauthUri('VDI portal', 'user@default', rfcSecret));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/VDI portal:user@default');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: rfcSecret,
      issuer: 'VDI portal',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });

  it('makes ten distinct recovery codes, hashed per user whatever their case', () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) {
      expect(code).toMatch(/^[A-Z2-7]{5}-[A-Z2-7]{5}$/);
      expect(isRecoveryCodeShape(code.toLowerCase())).toBe(true);
    }
    const [first = ''] = codes;
    expect(recoveryCodeHash('u1', first)).toBe(recoveryCodeHash('u1', first.toLowerCase()));
    expect(recoveryCodeHash('u1', first)).not.toBe(recoveryCodeHash('u2', first));
    expect(isRecoveryCodeShape('123456')).toBe(false);
  });
});
