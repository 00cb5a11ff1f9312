/**
 * What fastify-plugin does, without the dependency: marks a plugin so that its decorators and
 * hooks are visible to the parent scope (fastify's documented `skip-override` symbol).
 */
import type { FastifyPluginAsync } from 'fastify';

export function globalPlugin<T extends FastifyPluginAsync<never> | FastifyPluginAsync>(
  fn: T,
  name: string,
): T {
  Object.assign(fn, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: name,
  });
  return fn;
}
