/**
 * /authentication/passkeys: the user's passkeys from the profile (list, add with the WebAuthn
 * registration ceremony, rename, remove: the first second factor of the user also answers ten
 * recovery codes once, and removing the last one drops them), and the second login step with a passkey
 * (/authentication/second-factor/passkey). The routes live under /authentication, so an API key
 * never reaches them.
 *
 * The login step is the code step's twin: the options need a live, unpassed challenge of the
 * `second-factor-required` token and are refused while the step is locked; a refused signature
 * counts as a wrong code (five lock the step, 429); a verified one passes the token's challenge,
 * and the login continued with that token consumes it.
 *
 * The enrolment a policy forces at the login (/authentication/second-factor/enrolment/passkey)
 * offers a passkey beside the authenticator app: options bound to the live, unpassed challenge of
 * the `second-factor-enrolment-required` token, then the new passkey stored, ten recovery codes
 * answered once, and the token's challenge passed, as a confirmed TOTP enrolment does.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { assertAttemptsLeft, countAttempt } from '../../../platform/auth/attempt-windows.ts';
import { passkeysOf, removePasskey, renamePasskey } from '../../../platform/auth/passkeys.ts';
import {
  challengeOpen,
  dropUnusedRecoveryCodes,
  passChallenge,
  replaceRecoveryCodes,
  secondFactorSummary,
} from '../../../platform/auth/second-factors.ts';
import type { SpecialClaims } from '../../../platform/auth/tokens.ts';
import { passkeyToWire } from '../../../platform/db/schema.ts';
import {
  authenticationOptions,
  registerPasskey,
  registrationOptions,
  verifyWebAuthnAssertion,
} from '../passkey-ceremonies.ts';
import { challengeOf, SECOND_FACTOR_CODES, type SecondFactorStepType } from '../second-factor.ts';
import { publishUsersData } from '../users-data.ts';

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

const notFound = () => new ApiError('not_found', 'Passkey not found', 'not_found');

export default async function passkeyRoutes(app: FastifyInstance) {
  route(app, 'passkeys.list', async (request) => {
    const rows = await passkeysOf(app.db, authOf(request).userId);
    return rows.map(passkeyToWire);
  });

  route(app, 'passkeys.registrationOptions', async (request) => {
    const user = await app.users.byId(authOf(request).userId);
    if (!user) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    return registrationOptions(app, request, user);
  });

  route(app, 'passkeys.register', async (request) => {
    const { userId } = authOf(request);
    const { name, response } = request.body;
    const first = (await secondFactorSummary(app.db, userId)).kinds.length === 0;
    const id = await registerPasskey(app, request, userId, name, response);
    const codes = first ? await replaceRecoveryCodes(app.db, userId) : undefined;
    await publishUsersData(app, userId);
    return { id, ...(codes ? { recovery_codes: codes } : {}) };
  });

  route(app, 'passkeys.update', async (request) => {
    const { userId } = authOf(request);
    if (!(await renamePasskey(app.db, userId, request.params.id, request.body.name)))
      throw notFound();
    return {};
  });

  route(app, 'passkeys.delete', async (request) => {
    const { userId } = authOf(request);
    if (!(await removePasskey(app.db, userId, request.params.id))) throw notFound();
    await dropUnusedRecoveryCodes(app.db, userId);
    await publishUsersData(app, userId);
    return {};
  });

  /** The step token's user and challenge, while the step still waits for its factor. */
  const openStep = async (
    claims: SpecialClaims | null,
    type: SecondFactorStepType = 'second-factor-required',
  ) => {
    if (claims?.type !== type) throw invalidToken();
    const jti = challengeOf(claims);
    if (!(await challengeOpen(app.db, claims.user_id, jti))) throw invalidToken();
    return { userId: claims.user_id, jti };
  };

  route(app, 'session.secondFactorMethods', async (request) => {
    const { userId } = await openStep(request.specialToken);
    const { kinds } = await secondFactorSummary(app.db, userId);
    return { passkey: kinds.includes('passkey'), totp: kinds.includes('totp') };
  });

  route(app, 'session.passkeyOptions', async (request) => {
    const { userId, jti } = await openStep(request.specialToken);
    await assertAttemptsLeft(app, SECOND_FACTOR_CODES, userId);
    return authenticationOptions(app, request, userId, jti);
  });

  route(app, 'session.verifyPasskey', async (request) => {
    const { userId, jti } = await openStep(request.specialToken);
    await assertAttemptsLeft(app, SECOND_FACTOR_CODES, userId);
    try {
      await verifyWebAuthnAssertion(app, request, userId, jti, request.body.response);
    } catch (error) {
      await countAttempt(app, SECOND_FACTOR_CODES, userId);
      throw error;
    }
    await app.loginThrottle.succeed(`${SECOND_FACTOR_CODES.scope}:${userId}`);
    await passChallenge(app.db, userId, jti);
    return {};
  });

  route(app, 'session.enrolmentPasskeyOptions', async (request) => {
    const { userId, jti } = await openStep(
      request.specialToken,
      'second-factor-enrolment-required',
    );
    const user = await app.users.byId(userId);
    if (!user) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    return registrationOptions(app, request, user, jti);
  });

  route(app, 'session.confirmPasskeyEnrolment', async (request) => {
    const { userId, jti } = await openStep(
      request.specialToken,
      'second-factor-enrolment-required',
    );
    const { name, response } = request.body;
    await registerPasskey(app, request, userId, name, response, jti);
    const codes = await replaceRecoveryCodes(app.db, userId);
    await passChallenge(app.db, userId, jti);
    return { recovery_codes: codes };
  });
}
