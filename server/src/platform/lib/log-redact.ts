/**
 * Secrets are removed from every log line by their shape, whatever field or message carries them:
 * JWTs and API keys (a token pasted into a path segment or a query string is still a JWT), values of
 * secret-named keys in JSON (`"password":"…"`, `"spice_password":"…"`, `"ticket":"…"`) and in
 * query strings or `key=value` text (`?ticket=…`, `password=…`), and HTTP credentials
 * (`Bearer …`, `Basic …`, `user:pass@` in a URL). Applied to the finished line, so it covers
 * messages, error texts and anything a serializer let through.
 */

const CENSOR = '[redacted]';

/** A JWS compact serialisation: three base64url parts, the header starting `{"` (eyJ). */
const JWT = /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/** Names of keys whose values are secrets. */
const SECRET_NAME =
  '[A-Za-z0-9_-]*(?:password|passwd|secret|token|ticket|jwt|api_?key|private_?key|credential|cookie|authorization|jumperurl)[A-Za-z0-9_-]*';

/** `"<secret name>": "value"` in JSON (the value may contain escaped quotes). */
const JSON_SECRET = new RegExp(`("${SECRET_NAME}"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi');

/** `<secret name>=value` in a query string, a form or a `key=value` line. */
const PAIR_SECRET = new RegExp(`(\\b${SECRET_NAME}=)[^&\\s"'\\\\]+`, 'gi');

/** HTTP credentials: `Bearer x`, `Basic x`, and `scheme://user:password@` in URLs. */
const HTTP_CREDENTIAL = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@"]+@/gi;

/** API keys (`vdik_` and their random part), wherever they stand. */
const API_KEY = /\bvdik_[A-Za-z0-9_-]{16,}/g;

/** Direct-viewer links in paths: `/direct/<token>` (the API) and `/vw/<token>` (the SPA page). */
const DIRECT_LINK = /(\/(?:direct|vw)\/)[A-Za-z0-9_-]{20,}/g;

export function redactSecrets(line: string): string {
  return line
    .replace(JWT, CENSOR)
    .replace(API_KEY, CENSOR)
    .replace(JSON_SECRET, `$1"${CENSOR}"`)
    .replace(PAIR_SECRET, `$1${CENSOR}`)
    .replace(HTTP_CREDENTIAL, `$1 ${CENSOR}`)
    .replace(URL_USERINFO, `$1${CENSOR}@`)
    .replace(DIRECT_LINK, `$1${CENSOR}`);
}
