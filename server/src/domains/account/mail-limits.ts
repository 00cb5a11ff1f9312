/**
 * Rate limits of the requests that send account mail (forgot-password, sign-up), on the login
 * throttle's table and rules: every request counts as an attempt for its address key (and its
 * client's counter of mail requests, kept apart from failed logins); over the limit nothing is
 * sent. Completing the flow (a reset through the link, a registration) clears the address key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export const forgotPasswordKey = (categoryId: string, email: string) =>
  `forgot-password:${categoryId}:${email.toLowerCase()}`;

export const signupKey = (email: string) => `signup:${email.toLowerCase()}`;

/** Counts one mail request; true when it is over the limit. */
export async function mailRequestLimited(
  app: FastifyInstance,
  key: string,
  request: FastifyRequest,
): Promise<boolean> {
  const client = `account-mail:${request.ip}`;
  if (await app.loginThrottle.bannedUntil(key, client)) return true;
  return (await app.loginThrottle.fail(key, client)) !== undefined;
}
