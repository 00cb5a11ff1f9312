/**
 * API keys: `vdik_` followed by 32 random bytes in base64url (48 characters in all). Only the
 * SHA-256 of a key is stored; the key itself is shown once, when it is made. The prefix tells a
 * key from a JWT before anything is parsed.
 */
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'vdik_';

const API_KEY_RE = /^vdik_[A-Za-z0-9_-]{43}$/;

/** True for anything that claims to be an API key (the prefix), well formed or not. */
export function looksLikeApiKey(bearer: string): boolean {
  return bearer.startsWith(API_KEY_PREFIX);
}

/** True for a well-formed key (prefix and 32 bytes of base64url). */
export function isWellFormedApiKey(bearer: string): boolean {
  return API_KEY_RE.test(bearer);
}

/** A new random key. */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** What is stored for a key: its SHA-256 in hex. */
export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The session id every request authenticated by an API key carries (no session row exists). */
export const API_KEY_SESSION_ID = 'api-key';
