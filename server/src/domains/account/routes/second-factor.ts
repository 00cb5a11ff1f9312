/**
 * /authentication/second-factor: enrolling an authenticator app (TOTP) from the profile or from
 * the login step a policy forces, disabling it from the profile, and the second login step.
 *
 * Enrolment: the first call makes a secret (or shows the pending one) as base32 and an
 * `otpauth://` URI; the factor is enabled only when a valid code confirms it, and that answers
 * ten recovery codes, once; new ones replace them from the profile while a factor (an app or a
 * passkey) is on. Disabling needs a valid code, a recovery code or the password. The
 * routes live under /authentication, so an API key never reaches them.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { verifyPassword } from '../../../platform/auth/passwords.ts';
import { otpauthUri } from '../../../platform/auth/totp.ts';
import {
  challengeOpen,
  confirmTotp,
  passChallenge,
  pendingTotpSecret,
  removeSecondFactors,
  replaceRecoveryCodes,
  secondFactorSummary,
} from '../../../platform/auth/second-factors.ts';
import type { SpecialClaims } from '../../../platform/auth/tokens.ts';
import { assertAttemptsLeft, countAttempt } from '../../../platform/auth/attempt-windows.ts';
import {
  challengeOf,
  checkSecondFactorCode,
  codeInvalid,
  SECOND_FACTOR_CODES,
  TOTP_ISSUER,
  type SecondFactorStepType,
} from '../second-factor.ts';
import { publishUsersData } from '../users-data.ts';

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

export default async function secondFactorRoutes(app: FastifyInstance) {
  const userOf = async (userId: string) => {
    const user = await app.users.byId(userId);
    if (!user) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    return user;
  };

  /** The claims of the request's step token of `type` (a login token is refused). */
  const stepClaims = (request: FastifyRequest, type: SecondFactorStepType): SpecialClaims => {
    const claims = request.specialToken;
    if (claims?.type !== type) throw invalidToken();
    return claims;
  };

  const enrolment = async (userId: string) => {
    const user = await userOf(userId);
    const secret = await pendingTotpSecret(app.db, user.id);
    if (!secret)
      throw new ApiError(
        'conflict',
        'An authenticator app is enabled already',
        'second_factor_exists',
      );
    return { secret, uri: otpauthUri(TOTP_ISSUER, user.username, secret) };
  };

  const confirm = async (userId: string, code: string) => {
    const codes = await confirmTotp(app.db, userId, code);
    if (!codes) throw codeInvalid();
    return { recovery_codes: codes };
  };

  route(app, 'profile.totpEnrolment', async (request) => enrolment(authOf(request).userId));

  route(app, 'profile.confirmTotp', async (request) => {
    const { userId } = authOf(request);
    const answer = await confirm(userId, request.body.one_time_code);
    await publishUsersData(app, userId);
    return answer;
  });

  route(app, 'profile.disableSecondFactor', async (request) => {
    const { userId } = authOf(request);
    const { one_time_code: code, current_password: password } = request.body;
    if (!code && !password)
      throw new ApiError(
        'bad_request',
        'A code of the app, a recovery code or the password is required',
        'missing_required_data',
      );
    if (code) await checkSecondFactorCode(app, userId, code);
    else {
      await assertAttemptsLeft(app, SECOND_FACTOR_CODES, userId);
      const user = await userOf(userId);
      if (!(await verifyPassword(user.passwordHash, password ?? ''))) {
        await countAttempt(app, SECOND_FACTOR_CODES, userId);
        throw new ApiError('invalid_credentials', 'Invalid credentials', 'invalid_credentials');
      }
    }
    await removeSecondFactors(app.db, userId);
    await publishUsersData(app, userId);
    return {};
  });

  route(app, 'profile.regenerateRecoveryCodes', async (request) => {
    const { userId } = authOf(request);
    if ((await secondFactorSummary(app.db, userId)).kinds.length === 0)
      throw new ApiError('conflict', 'No second factor is enabled', 'second_factor_none');
    const codes = await replaceRecoveryCodes(app.db, userId);
    await publishUsersData(app, userId);
    return { recovery_codes: codes };
  });

  route(app, 'session.secondFactorEnrolment', async (request) =>
    enrolment(stepClaims(request, 'second-factor-enrolment-required').user_id),
  );

  route(app, 'session.confirmSecondFactorEnrolment', async (request) => {
    const claims = stepClaims(request, 'second-factor-enrolment-required');
    const jti = challengeOf(claims);
    if (!(await challengeOpen(app.db, claims.user_id, jti))) throw invalidToken();
    const answer = await confirm(claims.user_id, request.body.one_time_code);
    await passChallenge(app.db, claims.user_id, jti);
    return answer;
  });

  route(app, 'session.verifySecondFactor', async (request) => {
    const claims = stepClaims(request, 'second-factor-required');
    const jti = challengeOf(claims);
    if (!(await challengeOpen(app.db, claims.user_id, jti))) throw invalidToken();
    await checkSecondFactorCode(app, claims.user_id, request.body.one_time_code);
    await passChallenge(app.db, claims.user_id, jti);
    return {};
  });
}
