/**
 * Judges one answer to a fuzz case. Failures:
 * - any 5xx, except 501 not_implemented from a planned operation and 503 service_unavailable
 *   (hypervisor or maintenance);
 * - an error answer (4xx/5xx) whose body is not our error shape (the generated `Error` schema with
 *   `msg`): Fastify's own `{statusCode, code}` body, HTML or an empty body all fail;
 * - an anonymous call to an operation that needs a token getting past the token gate (2xx, 403
 *   or 501);
 * - any 2xx or 3xx to a case the server must refuse, but the refusal of a page the browser opens
 *   (a provider's callback): a 302 back to the login page naming the refusal's code
 *   (`/login?error=<code>`), which opens no session.
 */
import type { ValidateFunction } from 'ajv';
import type { Operation } from '../../../../src/generated/api.ts';
import { Error as ErrorBody } from '../../../../src/generated/validators.js';
import type { FuzzCase } from './cases.ts';

export type CallerName = 'anonymous' | 'owner' | 'other';

export interface Answer {
  status: number;
  body: string;
  /** the Location header of a redirect */
  location?: string;
  /** the Set-Cookie headers */
  cookies?: string;
}

/** A browser sent back to the login page with a refusal's code, and no session cookie. */
const refusedToLoginPage = (answer: Answer): boolean =>
  answer.status === 302 &&
  /^\/login\?error=[a-z][a-z0-9_]*$/.test(answer.location ?? '') &&
  !(answer.cookies ?? '').includes('authorization=');

export interface Verdict {
  /** why it failed, the same text for every answer with the same cause */
  cause: string;
}

const errorBodyValid: ValidateFunction = ErrorBody;

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const errorKind = (body: unknown): string | undefined =>
  typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string'
    ? body.error
    : undefined;

function hasErrorShape(body: unknown): boolean {
  return (
    errorBodyValid(body) &&
    typeof body === 'object' &&
    body !== null &&
    'msg' in body &&
    typeof body.msg === 'string'
  );
}

export function judge(
  op: Operation,
  isPublic: boolean,
  caller: CallerName,
  c: FuzzCase,
  answer: Answer,
): Verdict | null {
  const { status } = answer;
  const body = parse(answer.body);
  if (status >= 400) {
    if (!hasErrorShape(body))
      return {
        cause:
          body && typeof body === 'object' && 'statusCode' in body
            ? "error answered in Fastify's own shape, not ours"
            : 'error body not in our {error, msg, description, description_code, params} shape',
      };
    const kind = errorKind(body);
    if (status >= 500) {
      const documented =
        (status === 501 && op.planned && kind === 'not_implemented') ||
        (status === 503 && kind === 'service_unavailable');
      if (!documented) return { cause: `server error ${status} ${kind ?? ''}`.trim() };
    }
    if (caller === 'anonymous' && !isPublic && (status === 403 || status === 501))
      return { cause: `anonymous call passed the token gate (${status})` };
    return null;
  }
  if (caller === 'anonymous' && !isPublic)
    return { cause: 'anonymous call to a token operation answered 2xx' };
  if (c.expect === 'reject') {
    if (refusedToLoginPage(answer)) return null;
    if (c.group === 'valid') return { cause: "another user's object accessed (2xx)" };
    return { cause: 'hostile input accepted (2xx)' };
  }
  return null;
}
