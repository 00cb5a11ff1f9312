/**
 * How a login answers a token (login or a step's): as the body (with the Authorization header),
 * or, for a browser a provider sent back, only as the cookie of a 302 to the page it returns to.
 * Either way the `authorization` cookie carries it, and the answer is never cached.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export function sendToken(
  request: FastifyRequest,
  reply: FastifyReply,
  jwt: string,
  maxAge: number,
  redirect?: string,
): FastifyReply {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  reply
    .header('cache-control', 'no-store')
    .header(
      'set-cookie',
      `authorization=${jwt}; Path=/; Max-Age=${maxAge}; SameSite=Strict${secure}`,
    );
  if (redirect) return reply.code(302).header('location', redirect).send();
  return reply.header('authorization', `Bearer ${jwt}`).type('text/plain; charset=utf-8').send(jwt);
}
