/**
 * The one error type of the server. Every failure leaves as
 * { error, msg, description, description_code, params } (+ errors for field errors),
 * see docs/contracts.md.
 */
import type { Error as ErrorBody } from '../../../../src/generated/types.ts';

/** The schema's error kinds (`not_implemented`, 501, answers an operation declared but not built yet). */
export type ErrorKind = ErrorBody['error'];

/** The error body as it leaves the server. */
export type ErrorResponse = ErrorBody;

export const statusByKind: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_required: 428,
  too_many_requests: 429,
  internal_server: 500,
  service_unavailable: 503,
  not_implemented: 501,
  insufficient_storage: 507,
  gateway_timeout: 504,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_credentials: 401,
  user_disabled: 403,
  user_disallowed: 403,
  invalid_session: 401,
  missing_token: 401,
  invalid_token: 401,
};

const msgByKind: Record<ErrorKind, string> = {
  bad_request: 'Bad request',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  conflict: 'Conflict',
  precondition_required: 'Precondition required',
  too_many_requests: 'Too many requests',
  internal_server: 'Internal server error',
  service_unavailable: 'Service unavailable',
  not_implemented: 'Not implemented',
  insufficient_storage: 'Insufficient storage',
  gateway_timeout: 'Gateway timeout',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  invalid_credentials: 'Invalid credentials',
  user_disabled: 'Disabled user',
  user_disallowed: "User can't use this portal",
  invalid_session: 'Session expired',
  missing_token: 'Missing token',
  invalid_token: 'Invalid token',
};

export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly statusCode: number;
  readonly description: string;
  readonly descriptionCode: string;
  readonly params: Record<string, unknown> | null;
  readonly errors: Record<string, string> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    kind: ErrorKind,
    description?: string,
    descriptionCode?: string,
    params?: Record<string, unknown> | null,
    extra: {
      status?: number;
      errors?: Record<string, string>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(description ?? msgByKind[kind]);
    this.name = 'ApiError';
    this.kind = kind;
    this.statusCode = extra.status ?? statusByKind[kind];
    this.description = description ?? msgByKind[kind];
    this.descriptionCode = descriptionCode ?? kind;
    this.params = params ?? null;
    this.errors = extra.errors;
    this.headers = extra.headers;
  }

  toBody(): ErrorResponse {
    return errorBody(this.kind, this.description, this.descriptionCode, this.params, this.errors);
  }
}

export function errorBody(
  kind: ErrorKind,
  description?: string,
  descriptionCode?: string,
  params?: Record<string, unknown> | null,
  errors?: Record<string, string>,
): ErrorResponse {
  const body: ErrorResponse = {
    error: kind,
    msg: msgByKind[kind],
    description: description ?? msgByKind[kind],
    description_code: descriptionCode ?? kind,
    params: params ?? null,
  };
  if (errors) body.errors = errors;
  return body;
}

/** Status -> kind for errors that did not come from ApiError (fastify's own, plugins). */
export function kindForStatus(status: number): ErrorKind {
  const found = (Object.entries(statusByKind) as [ErrorKind, number][]).find(
    ([, s]) => s === status,
  );
  if (found) return found[0];
  return status >= 500 ? 'internal_server' : 'bad_request';
}
