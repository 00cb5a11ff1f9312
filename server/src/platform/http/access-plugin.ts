/**
 * Role visibility: the generated defaults (x-roles, fields, x-actions) with the admin's config
 * merged over them (access.ts). The config lives in a file (PORTAL_CONFIG, else
 * config/portal.json) so it can be kept in git: its `roles`, `fields` and `actions` keys are read at
 * boot, validated by the RoleVisibilityConfig schema, and replaced at run time by
 * `app.roleVisibility.save` (PUT /admin/role-visibility), which writes the file atomically and puts
 * the new config in force at once. Other top-level keys of the file are kept untouched.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import {
  createAccess,
  knownPart,
  unknownEntries,
  type Access,
  type RoleSets,
  type RoleVisibilityConfig,
} from './access.ts';
import { RoleVisibilityConfig as validateConfig } from '../../../../src/generated/validators.js';

export type { Access, RoleSets };

/** The config file as read: the role-visibility keys (other keys of the file are not read here). */
export type PortalConfig = RoleVisibilityConfig;

const KEYS = ['roles', 'fields', 'actions'] as const;

/** The role-visibility keys of a parsed file. */
function ownPart(file: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(KEYS.filter((k) => k in file).map((k) => [k, file[k]]));
}

function readFileObject(path: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`invalid role-visibility config ${path}: not a JSON object`);
  return parsed as Record<string, unknown>;
}

/**
 * Reads and validates the config file; no path, or a file not written yet (the first save creates
 * it), = no config (the generated defaults).
 */
export function readPortalConfig(path: string | undefined): PortalConfig {
  if (!path || !existsSync(path)) return {};
  const own = ownPart(readFileObject(path));
  if (!validateConfig(own)) {
    throw new Error(
      `invalid role-visibility config ${path}: ${(validateConfig.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('; ')}`,
    );
  }
  return own as PortalConfig;
}

/**
 * Writes the config into the file at `path` (created with its folder when missing), keeping the
 * file's other keys: a temporary file beside it, then a rename, so a reader never sees half a file.
 */
export function writePortalConfig(path: string, config: PortalConfig): void {
  const current = existsSync(path) ? readFileObject(path) : {};
  const next: Record<string, unknown> = { ...current };
  for (const key of KEYS) {
    if (config[key] && Object.keys(config[key]).length > 0) next[key] = config[key];
    else Reflect.deleteProperty(next, key);
  }
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644 });
  renameSync(temp, path);
}

export interface RoleVisibilityStore {
  /** The file changes are written to: PORTAL_CONFIG, else config/portal.json. */
  readonly path: string;
  /** Writes the config file and puts the config in force in this process. */
  save(config: PortalConfig): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    access: Access;
    roleVisibility: RoleVisibilityStore;
  }
}

const plugin: FastifyPluginAsync<{ portalConfig?: PortalConfig }> = async (app, opts) => {
  const path = app.config.portalConfigPath ?? resolve(process.cwd(), 'config/portal.json');
  const loaded = opts.portalConfig ?? readPortalConfig(app.config.portalConfigPath);
  // A file written for another version may name what this one no longer has: ignored, logged.
  const unknown = unknownEntries(loaded);
  if (unknown.length > 0)
    app.log.warn(
      { entries: unknown.map((p) => p.path) },
      'role-visibility config names unknown entries; they are ignored',
    );
  const access = createAccess(unknown.length > 0 ? knownPart(loaded) : loaded);
  app.decorate('access', access);
  app.decorate('roleVisibility', {
    path,
    save(config) {
      writePortalConfig(path, config);
      access.apply(config);
    },
  } satisfies RoleVisibilityStore);
};

export default globalPlugin(plugin, 'access');
