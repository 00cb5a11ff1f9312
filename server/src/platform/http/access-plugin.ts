/**
 * Role visibility: the generated defaults (x-roles, fields, x-actions) with the admin's config
 * merged over them (access.ts). The config lives in a file (PORTAL_CONFIG, else
 * config/portal.json) so it can be kept in git: its `roles`, `fields` and `actions` keys are read at
 * boot, validated by the RoleVisibilityConfig schema, and replaced at run time by
 * `app.roleVisibility.save` (PUT /admin/role-visibility), which writes the file atomically and puts
 * the new config in force at once. Other top-level keys of the file are kept untouched.
 *
 * The running copy is the `role_visibility` settings row ({ config, version }), which every node
 * reads again when the cluster bus says it changed: a save writes the file and the row, then
 * notifies. At boot the file wins when it was modified after the row was written (a change made
 * in git and deployed), and becomes the new running copy; otherwise the row is in force.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
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
  /**
   * Writes the config file and the running copy, puts the config in force in this process and
   * tells the other nodes to read it again.
   */
  save(config: PortalConfig): Promise<void>;
  /** Reads the running copy again and puts it in force when it changed (the cluster bus). */
  reload(): Promise<void>;
}

/** The settings row that holds the running copy of the config. */
export const ROLE_VISIBILITY_KEY = 'role_visibility';

interface RunningCopy {
  config: PortalConfig;
  version: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    access: Access;
    roleVisibility: RoleVisibilityStore;
  }
}

const plugin: FastifyPluginAsync<{ portalConfig?: PortalConfig }> = async (app, opts) => {
  const path = app.config.portalConfigPath ?? resolve(process.cwd(), 'config/portal.json');
  const { query } = app.database;
  // A file written for another version may name what this one no longer has: ignored, logged.
  const usable = (config: PortalConfig, origin: string) => {
    const unknown = unknownEntries(config);
    if (unknown.length === 0) return config;
    app.log.warn(
      { entries: unknown.map((p) => p.path), origin },
      'role-visibility config names unknown entries; they are ignored',
    );
    return knownPart(config);
  };
  const readRow = async () => {
    const [row] = await query<{ value: RunningCopy; updated_at: Date | string }>(
      'SELECT value, updated_at FROM settings WHERE key = $1',
      [ROLE_VISIBILITY_KEY],
    );
    return row && validateConfig(row.value.config)
      ? { ...row.value, updatedAt: new Date(row.updated_at) }
      : undefined;
  };
  const writeRow = async (config: PortalConfig): Promise<number> => {
    const [row] = await query<{ version: number }>(
      `INSERT INTO settings (key, value, updated_at)
         VALUES ($1, jsonb_build_object('config', $2::jsonb, 'version', 1), now())
       ON CONFLICT (key) DO UPDATE SET
         value = jsonb_build_object('config', $2::jsonb,
           'version', COALESCE((settings.value ->> 'version')::int, 0) + 1),
         updated_at = now()
       RETURNING (value ->> 'version')::int AS version`,
      [ROLE_VISIBILITY_KEY, JSON.stringify(config)],
    );
    return row?.version ?? 0;
  };

  const fileConfig = opts.portalConfig ?? readPortalConfig(app.config.portalConfigPath);
  const fileChanged =
    opts.portalConfig !== undefined
      ? new Date()
      : app.config.portalConfigPath && existsSync(app.config.portalConfigPath)
        ? statSync(app.config.portalConfigPath).mtime
        : undefined;
  const row = await readRow();
  let inForce: number;
  let loaded: PortalConfig;
  if (row && (!fileChanged || fileChanged <= row.updatedAt)) {
    loaded = row.config;
    inForce = row.version;
  } else {
    loaded = fileConfig;
    inForce = fileChanged ? await writeRow(fileConfig) : 0;
  }
  const access = createAccess(usable(loaded, 'boot'));
  app.decorate('access', access);

  const reload = async () => {
    const current = await readRow();
    // Reads may overlap and end in any order: only a newer copy replaces the one in force.
    if (!current || current.version <= inForce) return;
    inForce = current.version;
    access.apply(usable(current.config, 'running copy'));
    // Each node tells its own sockets, once the config is in force here: a client that reads its
    // visibility again from this node gets the new one.
    app.events.publishLocal({
      name: 'roleVisibility.changed',
      payload: { version: access.version },
      ownerId: '',
    });
  };
  app.cluster.on('role-visibility.changed', reload);
  app.cluster.on('resync', reload);
  if (row && fileChanged && fileChanged > row.updatedAt)
    app.cluster.publish({ kind: 'role-visibility.changed' });

  app.decorate('roleVisibility', {
    path,
    async save(config) {
      writePortalConfig(path, config);
      await writeRow(config);
      await reload();
      app.cluster.publish({ kind: 'role-visibility.changed' });
    },
    reload,
  } satisfies RoleVisibilityStore);
};

export default globalPlugin(plugin, 'access');
