/**
 * Role visibility: the generated roleSets (from each schema's x-roles) with the admin's config file
 * (PORTAL_CONFIG or config/portal.json: { "roles": { "<resource>": { "<set>": ["admin", ...] } } })
 * merged over them at boot. The server enforces the result; the SPA only hides what it would refuse.
 */
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync } from 'fastify';
import { Ajv } from 'ajv';
import { globalPlugin } from '../../lib/plugin.ts';
import { roles as allRoles, roleSets } from '../../../../src/generated/roles.ts';
import type { Access, RoleSets } from '../../lib/access.ts';

export type { Access, RoleSets };

export interface PortalConfig {
  roles?: RoleSets;
}

const portalConfigSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    roles: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: { type: 'array', uniqueItems: true, items: { enum: [...allRoles] } },
      },
    },
  },
};

export function readPortalConfig(path: string | undefined): PortalConfig {
  if (!path) return {};
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const validate = new Ajv({ allErrors: true }).compile<PortalConfig>(portalConfigSchema);
  if (!validate(parsed)) {
    throw new Error(
      `invalid role-visibility config ${path}: ${(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('; ')}`,
    );
  }
  return parsed;
}

export function mergeRoleSets(base: RoleSets, override: RoleSets | undefined): RoleSets {
  const merged: RoleSets = {};
  for (const [resource, sets] of Object.entries(base)) merged[resource] = { ...sets };
  for (const [resource, sets] of Object.entries(override ?? {}))
    merged[resource] = { ...merged[resource], ...sets };
  return merged;
}

declare module 'fastify' {
  interface FastifyInstance {
    access: Access;
  }
}

const plugin: FastifyPluginAsync<{ portalConfig?: PortalConfig }> = async (app, opts) => {
  const config = opts.portalConfig ?? readPortalConfig(app.config.portalConfigPath);
  const merged = mergeRoleSets(roleSets, config.roles);
  app.decorate('access', {
    roleSets: merged,
    rolesFor(op) {
      if (op.access === 'public') return null;
      if (op.access === 'token') return allRoles;
      return merged[op.resource]?.[op.access] ?? op.roles ?? [];
    },
  } satisfies Access);
};

export default globalPlugin(plugin, 'access');
