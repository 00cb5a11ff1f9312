/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA-1, 6 digits, 30-second
 * steps, the secret in base32 (RFC 4648, no padding) as authenticator apps expect it. A code is
 * checked against the current step and one step either side (clock drift), and only a step
 * later than the last one accepted counts, so a code works once.
 *
 * Recovery codes: ten random codes of 10 base32 characters (50 bits), shown once as
 * `XXXXX-XXXXX`; only their SHA-256 with the user id is kept.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** Steps accepted either side of the current one. */
export const TOTP_DRIFT_STEPS = 1;
export const RECOVERY_CODE_COUNT = 10;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case-insensitive, spaces and padding ignored); throws on another character. */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const index = ALPHABET.indexOf(ch);
    if (index < 0) throw new Error(`not base32: ${ch}`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 20 random bytes (the size of an SHA-1 block's key), in base32. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20));

/** The time step of a moment (ms since the epoch). */
export const totpStep = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS);

/** The HOTP code of a counter, `digits` long (zero-padded). */
export function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The TOTP code of a base32 secret at a moment. */
export const totpCode = (secret: string, nowMs = Date.now()): string =>
  hotp(base32Decode(secret), totpStep(nowMs));

const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The step a code matches (current step first, then the drift steps), when that step is later
 * than `lastStep`; undefined otherwise (wrong, too old, or already used).
 */
export function matchTotp(
  secret: string,
  code: string,
  lastStep: number | null,
  nowMs = Date.now(),
): number | undefined {
  const given = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(given)) return undefined;
  const key = base32Decode(secret);
  const now = totpStep(nowMs);
  const steps = [now];
  for (let d = 1; d <= TOTP_DRIFT_STEPS; d += 1) steps.push(now - d, now + d);
  for (const step of steps)
    if ((lastStep === null || step > lastStep) && sameText(hotp(key, step), given)) return step;
  return undefined;
}

/** The `otpauth://` URI authenticator apps read (as text or from a QR code). */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_PERIOD_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/** Ten fresh recovery codes, `XXXXX-XXXXX`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const text = base32Encode(randomBytes(7)).slice(0, 10);
    return `${text.slice(0, 5)}-${text.slice(5)}`;
  });
}

/** A recovery code as typed (case, spaces and dashes do not matter), normalised. */
const normaliseRecovery = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();

/** True when the text looks like a recovery code rather than a TOTP code. */
export const isRecoveryCodeShape = (code: string): boolean =>
  /^[A-Z2-7]{10}$/.test(normaliseRecovery(code));

/** What is stored of a recovery code: SHA-256 of the user id and the normalised code. */
export const recoveryCodeHash = (userId: string, code: string): string =>
  createHash('sha256')
    .update(`${userId}:${normaliseRecovery(code)}`)
    .digest('hex');
