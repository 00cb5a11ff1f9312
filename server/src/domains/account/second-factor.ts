/**
 * The second factor of a login, at the point where a session is about to be issued (every
 * provider's login passes through it): a user with a confirmed factor gets the
 * `second-factor-required` step (a token of 5 minutes whose jti names a challenge: a valid code
 * passes it, the session it then opens consumes it, so the token opens one session at most); a
 * user without one whose account policy requires it gets the `second-factor-enrolment-required`
 * step (10 minutes), which enrols an authenticator app and, once confirmed with a code, carries
 * the login on to its session the same way.
 *
 * Wrong codes are counted per user on the login throttle's table: five in 15 minutes lock the
 * second step (429 with `Retry-After`, even for a right code) until the window ends.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AttemptWindow } from '../../platform/auth/attempt-windows.ts';
import { assertAttemptsLeft, countAttempt } from '../../platform/auth/attempt-windows.ts';
import type { AccountPolicy } from '../../platform/auth/password-policy.ts';
import {
  consumeChallenge,
  openChallenge,
  secondFactorSummary,
  useSecondFactorCode,
} from '../../platform/auth/second-factors.ts';
import type { SpecialClaims } from '../../platform/auth/tokens.ts';
import { newJti } from './account-tokens.ts';

/** The token types of the second step. */
export const SECOND_FACTOR_TYPES = [
  'second-factor-required',
  'second-factor-enrolment-required',
] as const;
export type SecondFactorStepType = (typeof SECOND_FACTOR_TYPES)[number];

/** How long each second-step token lasts (seconds). */
export const SECOND_FACTOR_SECONDS: Record<SecondFactorStepType, number> = {
  'second-factor-required': 300,
  'second-factor-enrolment-required': 600,
};

/** Wrong second-factor codes: 5 per 15 minutes per user, then the step is locked. */
export const SECOND_FACTOR_CODES: AttemptWindow = {
  scope: 'second-factor',
  max: 5,
  windowSeconds: 15 * 60,
};

/** The name authenticator apps show for the portal's entries. */
export const TOTP_ISSUER = 'VDI portal';

export const codeInvalid = () =>
  new ApiError('bad_request', 'The code is not valid', 'second_factor_code_invalid', null, {
    errors: { '/one_time_code': 'second_factor_code_invalid' },
  });

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

/** The second step a login must pass before its session, or undefined when none. */
export async function secondFactorStepOf(
  app: FastifyInstance,
  userId: string,
  policy: AccountPolicy | undefined,
): Promise<SecondFactorStepType | undefined> {
  const { kinds } = await secondFactorSummary(app.db, userId);
  if (kinds.length > 0) return 'second-factor-required';
  if (policy?.second_factor) return 'second-factor-enrolment-required';
  return undefined;
}

/** Signs a second-step token and opens its challenge. */
export async function signSecondFactorStep(
  app: FastifyInstance,
  type: SecondFactorStepType,
  userId: string,
): Promise<{ token: string; seconds: number }> {
  const seconds = SECOND_FACTOR_SECONDS[type];
  const jti = newJti();
  await openChallenge(app.db, userId, jti, new Date(Date.now() + seconds * 1000));
  return { token: await app.tokens.signSpecial(type, userId, seconds, { jti }), seconds };
}

/** The jti of a second-step token (403 invalid_token without one). */
export function challengeOf(claims: SpecialClaims): string {
  const jti: unknown = claims.jti;
  if (typeof jti !== 'string' || jti === '') throw invalidToken();
  return jti;
}

/** Uses up the passed challenge of a step token: true when the login may now open its session. */
export async function takePassedChallenge(
  app: FastifyInstance,
  claims: SpecialClaims,
): Promise<boolean> {
  return consumeChallenge(app.db, claims.user_id, challengeOf(claims));
}

/**
 * Checks a code of the user's second factor under the lockout: 429 once five wrong codes are
 * counted in the window, 400 `second_factor_code_invalid` for a wrong (or reused) code.
 */
export async function checkSecondFactorCode(
  app: FastifyInstance,
  userId: string,
  code: string,
): Promise<void> {
  await assertAttemptsLeft(app, SECOND_FACTOR_CODES, userId);
  if (await useSecondFactorCode(app.db, userId, code)) {
    await app.loginThrottle.succeed(`${SECOND_FACTOR_CODES.scope}:${userId}`);
    return;
  }
  await countAttempt(app, SECOND_FACTOR_CODES, userId);
  throw codeInvalid();
}
