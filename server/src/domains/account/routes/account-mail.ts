/**
 * The account flows that go through a mail link: forgot and reset password, request and verify an
 * email address, sign up for a registration link.
 *
 * Forgot-password (in a category that exists) and sign-up answer 200 {} whatever the address or
 * username: the lookups run for
 * every request and the mail (if any) is made and sent in the background, so neither the body nor
 * the time tells whether an account exists. Both are rate limited (../../account/mail-limits.ts);
 * a limited request still answers 200 {} and sends nothing.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { hashPassword } from '../../../platform/auth/passwords.ts';
import { route } from '../../../platform/http/route.ts';
import { constraints } from '../../../../../src/generated/constants.ts';
import { checkSameAs } from '../confirmation.ts';
import {
  checkPassword,
  nextHistory,
  passwordExpired,
  policyFor,
} from '../../../platform/auth/password-policy.ts';
import { asEmailVerification, asPasswordReset, specialTokenOf } from '../account-tokens.ts';
import {
  mailAccountExists,
  mailEmailVerification,
  mailPasswordReset,
  mailRegistration,
  startEmailVerification,
} from '../account-mails.ts';
import { linkBase } from '../links.ts';
import { languageOf } from '../../../platform/lib/languages.ts';
import { publishUsersData } from '../users-data.ts';
import { forgotPasswordKey, mailRequestLimited, signupKey } from '../mail-limits.ts';
import type { UserRow } from '../../../platform/db/schema.ts';

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

const emailInUse = () =>
  new ApiError('conflict', 'That email is already in use', 'email_already_in_use');

export default async function accountMailRoutes(app: FastifyInstance) {
  const policyOf = async (user: Pick<UserRow, 'categoryId' | 'role' | 'provider'>) =>
    policyFor((await app.settings.all()).account_policies, {
      categoryId: user.categoryId,
      role: user.role,
      provider: user.provider,
    });

  route(app, 'session.forgotPassword', async (request) => {
    const { category_id: categoryId, email } = request.body;
    // Categories are public (their list, their login pages): an unknown one tells nothing of accounts.
    if ((await app.users.category(categoryId))?.id !== categoryId)
      throw new ApiError('not_found', 'Category not found', 'not_found', { id: categoryId });
    const key = forgotPasswordKey(categoryId, email);
    if (await mailRequestLimited(app, key, request)) return {};
    // Only verified addresses: a mistyped, unverified one must not receive someone's reset link.
    const accounts = (await app.users.findLocalByEmail(email, categoryId)).filter(
      (u) => u.emailVerified,
    );
    const base = linkBase(app, request);
    if (accounts.length > 0)
      app.mailer.later(async () => {
        for (const user of accounts) await mailPasswordReset(app, base, user);
      });
    return {};
  });

  route(app, 'session.resetPassword', async (request) => {
    const claims = await specialTokenOf(app, request, [
      'password-reset',
      'password-reset-required',
    ]);
    const user = await app.users.byId(claims.user_id);
    if (!user || !user.active) throw invalidToken();
    const policy = await policyOf(user);
    let resetJti: string | undefined;
    if (claims.type === 'password-reset') {
      resetJti = asPasswordReset(claims).jti;
      if (user.passwordResetJti !== resetJti) throw invalidToken();
    } else if (
      !user.passwordResetRequired &&
      !(user.provider === 'local' && passwordExpired(policy?.password, user.passwordLastUpdated))
    ) {
      // The step token of a login works only while the password still has to change.
      throw invalidToken();
    }
    const body = request.body;
    checkSameAs(constraints.session.resetPasswordConfirmation, body);
    await checkPassword(policy?.password, body.password, {
      username: user.username,
      history: user.passwordHistory,
    });
    const passwordHash = await hashPassword(body.password);
    const changed = await app.users.changePassword(
      user.id,
      {
        passwordHash,
        passwordHistory: nextHistory(
          user.passwordHistory,
          passwordHash,
          policy?.password.old_passwords ?? 0,
        ),
      },
      resetJti,
    );
    if (!changed) throw invalidToken();
    // A new password ends every session the old one opened.
    await app.sessions.revokeUser(user.id);
    if (resetJti && user.email)
      await app.loginThrottle.succeed(forgotPasswordKey(user.categoryId, user.email));
    return {};
  });

  route(app, 'session.requestEmailVerification', async (request) => {
    const claims = await specialTokenOf(app, request, ['email-verification-required']);
    const user = await app.users.byId(claims.user_id);
    if (!user || !user.active) throw invalidToken();
    const { email } = request.body;
    if (await app.users.emailInUse(email, user.categoryId, user.id)) throw emailInUse();
    const jti = await startEmailVerification(app, user.id, email);
    const base = linkBase(app, request);
    app.mailer.later(() => mailEmailVerification(app, base, user, email, jti));
    return {};
  });

  route(app, 'session.verifyEmail', async (request) => {
    const claims = asEmailVerification(await specialTokenOf(app, request, ['email-verification']));
    const user = await app.users.byId(claims.user_id);
    if (!user || user.emailVerificationJti !== claims.jti) throw invalidToken();
    if (await app.users.emailInUse(claims.email, user.categoryId, user.id)) throw emailInUse();
    if (!(await app.users.useEmailVerification(user.id, claims.jti, claims.email)))
      throw invalidToken();
    await publishUsersData(app, user.id);
    return {};
  });

  route(app, 'session.signup', async (request) => {
    const signup = request.body;
    const overLimit = await mailRequestLimited(app, signupKey(signup.email), request);
    const category = await app.users.category(signup.category_id);
    const open = !overLimit && category?.id === signup.category_id && category.frontend;
    if (!open) return {};
    const [account, addressInUse] = await Promise.all([
      app.users.findLocal(signup.username, signup.category_id),
      app.users.emailInUse(signup.email, signup.category_id),
    ]);
    const taken = account !== undefined || addressInUse;
    const base = linkBase(app, request);
    const lang = languageOf(request.headers['accept-language']);
    app.mailer.later(() =>
      taken
        ? mailAccountExists(app, base, signup, lang)
        : mailRegistration(app, base, signup, lang),
    );
    return {};
  });
}
