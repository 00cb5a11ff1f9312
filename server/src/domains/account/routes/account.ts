/**
 * /api/v3 account routes: the profile page (show, update, language, password policies, a new
 * verification mail), registration with a code from a register link, and the disclaimer.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { hashPassword, verifyPassword } from '../../../platform/auth/passwords.ts';
import { route } from '../../../platform/http/route.ts';
import { roleNames } from '../../../platform/auth/tokens.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import {
  assertAttemptsLeft,
  countAttempt,
  WRONG_REGISTRATION_CODES,
} from '../../../platform/auth/attempt-windows.ts';
import { appliedQuota, templatesUsedBy, usedBy, deploymentUsage, GIB } from '../../quotas/index.ts';
import { constraints, defaults } from '../../../../../src/generated/constants.ts';
import type { Profile, SessionUserDisclaimer } from '../../../../../src/generated/types.ts';
import type { UserRow } from '../../../platform/db/schema.ts';
import type { ProfileChange } from '../../directory/index.ts';
import { checkSameAs } from '../confirmation.ts';
import {
  checkPassword,
  nextHistory,
  policyFor,
  type AccountPolicy,
} from '../../../platform/auth/password-policy.ts';
import { asRegister, specialTokenOf } from '../account-tokens.ts';
import { mailEmailVerification, startEmailVerification } from '../account-mails.ts';
import { linkBase } from '../links.ts';
import { languageOf } from '../../../platform/lib/languages.ts';
import { sanitizeHtml } from '../../../platform/lib/html-sanitizer.ts';
import { publishUsersData } from '../users-data.ts';
import { signupKey } from '../mail-limits.ts';
import { secondFactorSummary } from '../../../platform/auth/second-factors.ts';
import { registerSsoAccount } from '../sso-accounts.ts';

const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

/** A photo is an image data URL or an http(s) address. */
const PHOTO = /^(data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+|https?:\/\/\S+)$/;

/** Sends a JSON value that may be false or null as it is. */
const sendJson = (reply: FastifyReply, value: unknown) =>
  reply.type('application/json').send(JSON.stringify(value));

export default async function accountRoutes(app: FastifyInstance) {
  const policyOf = async (
    user: Pick<UserRow, 'categoryId' | 'role' | 'provider'>,
  ): Promise<AccountPolicy | undefined> =>
    policyFor((await app.settings.all()).account_policies, {
      categoryId: user.categoryId,
      role: user.role,
      provider: user.provider,
    });

  const callerRow = async (request: FastifyRequest) => {
    const user = await app.users.byId(authOf(request).userId);
    if (!user) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    return user;
  };

  route(app, 'profile.show', async (request) => {
    const auth = authOf(request);
    const u = await app.users.withNames(auth.userId);
    if (!u) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    const subject = { userId: u.id, groupId: u.groupId, categoryId: u.categoryId, role: u.role };
    const { query } = app.database;
    const [settings, applied, used, templates, media, deployments, factors] = await Promise.all([
      app.settings.all(),
      appliedQuota(query, subject),
      usedBy(query, 'user_id', u.id),
      templatesUsedBy(query, 'user_id', u.id),
      app.mediaUsage.usage('user_id', u.id),
      deploymentUsage(query, u.id),
      secondFactorSummary(app.db, u.id),
    ]);
    const policy = policyFor(settings.account_policies, {
      categoryId: u.categoryId,
      role: u.role,
      provider: u.provider,
    });
    const keyExpires = u.apiKeyExpires?.getTime() ?? 0;
    // Whitelist: never the password hash or history, the link ids or any key.
    const profile: Profile = {
      id: u.id,
      name: u.name,
      username: u.username,
      email: u.email,
      email_verified: u.emailVerified,
      photo: u.photo,
      provider: u.provider,
      role_name: roleNames[u.role],
      category_name: u.categoryName,
      group_name: u.groupName,
      secondary_groups_names: [],
      quota: applied.quota,
      used: {
        desktops: used.desktops,
        volatile: used.volatile,
        running: used.running,
        memory: used.memory,
        vcpus: used.vcpus,
        templates,
        isos: media.count,
        media_size: Math.round((media.bytes / GIB) * 100) / 100,
        deployments_total: deployments.total,
        deployment_desktops: deployments.desktops,
        started_deployment_desktops: deployments.started,
      },
      restriction_applied: applied.restriction_applied,
      language: u.lang,
      api_key: {
        exists: u.apiKeyHash !== null && keyExpires > Date.now(),
        expires: u.apiKeyHash !== null && keyExpires > 0 ? Math.floor(keyExpires / 1000) : 0,
      },
      vpn_address: u.wgAddress,
      migration: { export: settings.migration.export, import: settings.migration.import },
      show_change_email_button: u.provider === 'local',
      mail_delivery: app.mailer.delivery,
      password_policy: policy?.password ?? false,
      second_factor: {
        totp: factors.kinds.includes('totp'),
        passkeys: factors.passkeys,
        required: policy?.second_factor ?? false,
        recovery_codes_left: factors.recoveryCodesLeft,
      },
    };
    return profile;
  });

  route(app, 'profile.update', async (request) => {
    const auth = authOf(request);
    const user = await callerRow(request);
    const body = request.body;
    const policy = await policyOf(user);
    // Everything is checked before anything is written.
    if (body.photo !== undefined && !PHOTO.test(body.photo))
      throw new ApiError(
        'bad_request',
        'The photo must be an image data URL or an http(s) address',
        'invalid_photo',
        null,
        { errors: { '/photo': 'invalid_photo' } },
      );
    const email = body.email;
    if (email !== undefined) {
      if (user.provider !== 'local')
        throw new ApiError('forbidden', 'This account gets its address from its provider');
      if (user.email?.toLowerCase() === email.toLowerCase())
        throw new ApiError('bad_request', 'That is the current address', 'email_unchanged', null, {
          errors: { '/email': 'email_unchanged' },
        });
      if (await app.users.emailInUse(email, user.categoryId, user.id))
        throw new ApiError('conflict', 'That email is already in use', 'email_already_in_use');
    }
    // A new address or password needs the current password: a stolen session alone could
    // otherwise move the account's mail elsewhere and reset the password from there.
    if (
      (body.password !== undefined || email !== undefined) &&
      !(await verifyPassword(user.passwordHash, body.current_password ?? ''))
    )
      throw new ApiError(
        'forbidden',
        'The current password is wrong',
        'wrong_password_entered',
        null,
        { errors: { '/current_password': 'wrong_password_entered' } },
      );
    let passwordHash: string | undefined;
    if (body.password !== undefined) {
      checkSameAs(constraints.profile.passwordConfirmation, body);
      await checkPassword(policy?.password, body.password, {
        username: user.username,
        history: user.passwordHistory,
      });
      passwordHash = await hashPassword(body.password);
    }

    const patch: ProfileChange = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.photo !== undefined) patch.photo = body.photo;
    await app.users.setProfile(user.id, patch);
    if (passwordHash !== undefined) {
      await app.users.changePassword(user.id, {
        passwordHash,
        passwordHistory: nextHistory(
          user.passwordHistory,
          passwordHash,
          policy?.password.old_passwords ?? 0,
        ),
      });
      const endOthers = body.end_other_sessions ?? defaults.ProfileUpdate.end_other_sessions;
      if (endOthers) await app.sessions.revokeUserExcept(user.id, auth.sessionId);
    }
    if (email !== undefined) {
      const jti = await startEmailVerification(app, user.id, email);
      const base = linkBase(app, request);
      app.mailer.later(() =>
        mailEmailVerification(app, base, { ...user, name: patch.name ?? user.name }, email, jti),
      );
    }
    await publishUsersData(app, user.id);
    return {};
  });

  route(app, 'profile.sendVerification', async (request) => {
    const user = await callerRow(request);
    const email = user.email;
    if (!email)
      throw new ApiError('bad_request', 'The account has no email address', 'email_not_set');
    if (user.emailVerified)
      throw new ApiError(
        'bad_request',
        'The email address is already verified',
        'email_already_verified',
      );
    const jti = await startEmailVerification(app, user.id, email);
    const base = linkBase(app, request);
    app.mailer.later(() => mailEmailVerification(app, base, user, email, jti));
    return {};
  });

  route(app, 'profile.language', async (request) => {
    const userId = authOf(request).userId;
    await app.users.setLanguage(userId, request.params.lang);
    await publishUsersData(app, userId);
    return {};
  });

  route(app, 'profile.passwordPolicy', async (request, reply) => {
    const user = await callerRow(request);
    return sendJson(reply, (await policyOf(user))?.password ?? false);
  });

  route(app, 'profile.expiredPasswordPolicy', async (request, reply) => {
    const claims = await specialTokenOf(app, request, [
      'password-reset',
      'password-reset-required',
    ]);
    const user = await app.users.byId(claims.user_id);
    if (!user) throw invalidToken();
    return sendJson(reply, (await policyOf(user))?.password ?? false);
  });

  /**
   * Registration from a register link and a code: the code (looked up as a manager, then an
   * advanced, then a user code) gives the group and role and must belong to the link's category;
   * a local account also sets its password here. The address is verified (the link was mailed to
   * it) and the account keeps the link's jti until its first login uses it. The register step of a
   * directory's or provider's first sign-in makes that person's account, without a password.
   */
  route(app, 'session.register', async (request) => {
    const claims = asRegister(await specialTokenOf(app, request, ['register']));
    if (await app.settings.maintenanceFor(claims.category_id))
      throw new ApiError('service_unavailable', 'Under maintenance', 'maintenance');
    const body = request.body;
    await assertAttemptsLeft(app, WRONG_REGISTRATION_CODES, request.ip);
    const enrollment = await app.users.enrollment(body.code.trim());
    // Another category's code answers exactly like an unknown one: no hint that it exists.
    if (enrollment?.categoryId !== claims.category_id) {
      await countAttempt(app, WRONG_REGISTRATION_CODES, request.ip);
      throw new ApiError('not_found', 'Registration code not found', 'code_not_found');
    }
    // a directory's or provider's person: the code's group and role, no password
    if (claims.provider !== 'local')
      return { id: await registerSsoAccount(app, request, claims, enrollment) };
    if (await app.users.findLocal(claims.username, claims.category_id))
      throw new ApiError('conflict', 'The account exists already', 'conflict');
    if (await app.users.emailInUse(claims.email, claims.category_id))
      throw new ApiError('conflict', 'That email is already in use', 'email_already_in_use');
    if (body.password === undefined)
      throw new ApiError('bad_request', 'A password is required', 'missing_required_data', null, {
        errors: { '/password': 'required' },
      });
    checkSameAs(constraints.session.registerPasswordConfirmation, body);
    const who = { categoryId: claims.category_id, role: enrollment.role, provider: 'local' };
    const policy = await policyOf(who);
    await checkPassword(policy?.password, body.password, {
      username: claims.username,
      history: [],
    });
    const passwordHash = await hashPassword(body.password);
    const created = await app.users.create({
      id: randomUUID(),
      uid: claims.username,
      username: claims.username,
      name: claims.name,
      provider: 'local',
      categoryId: claims.category_id,
      groupId: enrollment.groupId,
      role: enrollment.role,
      passwordHash,
      passwordHistory: nextHistory([], passwordHash, policy?.password.old_passwords ?? 0),
      passwordLastUpdated: new Date(),
      active: true,
      email: claims.email,
      emailVerified: true,
      emailVerificationJti: claims.jti,
      lang: languageOf(request.headers['accept-language']),
    });
    if (!created) throw new ApiError('conflict', 'The account exists already', 'conflict');
    await app.loginThrottle.succeed(signupKey(claims.email));
    return { id: created.id };
  });

  route(app, 'session.disclaimer', async (request, reply) => {
    const claims = await specialTokenOf(app, request, ['disclaimer-acknowledgement-required']);
    const user = await app.users.byId(claims.user_id);
    if (!user) throw invalidToken();
    const texts = (await app.settings.all()).disclaimer_text;
    const text = (user.lang ? texts.lang[user.lang] : undefined) ?? texts.lang[texts.default];
    const disclaimer: SessionUserDisclaimer = text
      ? { title: text.title, body: sanitizeHtml(text.body), footer: sanitizeHtml(text.footer) }
      : null;
    return sendJson(reply, disclaimer);
  });
}
