/**
 * The account mails: each stores the new link's jti where the flow needs it (so older links of
 * the same kind stop working), signs the link token and hands the mail to the mailer.
 */
import type { FastifyInstance } from 'fastify';
import type { UserRow } from '../../platform/db/schema.ts';
import { constants } from '../../../../src/generated/constants.ts';
import { newJti, signAccountToken } from './account-tokens.ts';
import { tokenLink } from './links.ts';
import { mailContent, type MailKind, type MailVariables } from './mail-texts.ts';

const MINUTES = constants.session.accountTokenMinutes.value;

/** The pages the links open. */
export const LINK_PATHS = {
  verifyEmail: '/verify-email',
  resetPassword: '/reset-password',
  register: '/register',
  forgotPassword: '/forgot-password',
} as const;

async function deliver(
  app: FastifyInstance,
  kind: MailKind,
  to: string,
  lang: string | null,
  variables: Omit<MailVariables, 'minutes' | 'site'>,
  base: string,
): Promise<void> {
  const content = mailContent(kind, lang, {
    ...variables,
    site: new URL(base).host,
    minutes: MINUTES,
  });
  await app.mailer.send({ to, ...content });
}

/** Stores a new email-verification jti for `email` (unverified) and returns it. */
export async function startEmailVerification(
  app: FastifyInstance,
  userId: string,
  email: string,
): Promise<string> {
  const jti = newJti();
  await app.users.startEmailVerification(userId, email, jti);
  return jti;
}

/** Mails the verification link of `jti` to `email`. */
export async function mailEmailVerification(
  app: FastifyInstance,
  base: string,
  user: Pick<UserRow, 'id' | 'name' | 'username' | 'lang'>,
  email: string,
  jti: string,
): Promise<void> {
  const token = await signAccountToken(app, 'email-verification', user.id, jti, { email });
  await deliver(
    app,
    'verifyEmail',
    email,
    user.lang,
    {
      name: user.name || user.username,
      username: user.username,
      email,
      link: tokenLink(base, LINK_PATHS.verifyEmail, token),
    },
    base,
  );
}

/** Stores a new password-reset jti for the account and mails its link to the account's address. */
export async function mailPasswordReset(
  app: FastifyInstance,
  base: string,
  user: Pick<UserRow, 'id' | 'name' | 'username' | 'lang' | 'email'>,
): Promise<void> {
  if (!user.email) return;
  const jti = newJti();
  await app.users.setPasswordResetLink(user.id, jti);
  const token = await signAccountToken(app, 'password-reset', user.id, jti);
  await deliver(
    app,
    'resetPassword',
    user.email,
    user.lang,
    {
      name: user.name || user.username,
      username: user.username,
      email: user.email,
      link: tokenLink(base, LINK_PATHS.resetPassword, token),
    },
    base,
  );
}

export interface Signup {
  category_id: string;
  username: string;
  name: string;
  email: string;
}

/** Mails the registration link of a sign-up (claims: the sign-up, provider local, a jti). */
export async function mailRegistration(
  app: FastifyInstance,
  base: string,
  signup: Signup,
  lang: string | null,
): Promise<void> {
  const token = await signAccountToken(app, 'register', signup.username, newJti(), {
    category_id: signup.category_id,
    username: signup.username,
    name: signup.name,
    email: signup.email,
    provider: 'local',
  });
  await deliver(
    app,
    'register',
    signup.email,
    lang,
    {
      name: signup.name,
      username: signup.username,
      email: signup.email,
      link: tokenLink(base, LINK_PATHS.register, token),
    },
    base,
  );
}

/** Tells the address of a sign-up that the account or address exists, with the forgot-password page. */
export async function mailAccountExists(
  app: FastifyInstance,
  base: string,
  signup: Signup,
  lang: string | null,
): Promise<void> {
  await deliver(
    app,
    'accountExists',
    signup.email,
    lang,
    {
      name: signup.name,
      username: signup.username,
      email: signup.email,
      link: new URL(LINK_PATHS.forgotPassword, base).toString(),
    },
    base,
  );
}
