/**
 * Portal settings (key -> jsonb) merged over code defaults, cached for two seconds: maintenance,
 * its text, the /user/config flags, disclaimer policy.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../lib/plugin.ts';

export interface Settings {
  maintenance: boolean;
  maintenance_text: { title: string; body: string; enabled: boolean };
  show_bookings_button: boolean;
  documentation_url: string;
  viewers_documentation_url: string;
  show_temporal_tab: boolean;
  smtp_enabled: boolean;
  http_port: string;
  https_port: string;
  bastion: {
    enabled: boolean;
    domain: string | null;
    ssh_port: string | null;
    individual_domains: boolean;
  };
  migrations_block: boolean;
  disclaimer_required: boolean;
  login_config: Record<string, unknown>;
  status_bar: Record<string, unknown> | null;
  /**
   * Recycle-bin retention in hours (0 = deleted at once, null = kept forever) and the initial
   * "send to the recycle bin" choice; unset, the recycle bin uses its own defaults.
   */
  recycle_bin_cutoff_time?: number | null;
  recycle_bin_default_delete?: boolean;
}

/** Settings without a code default: read when stored, absent otherwise. */
const OPTIONAL_KEYS: readonly string[] = ['recycle_bin_cutoff_time', 'recycle_bin_default_delete'];

export const defaultSettings: Settings = {
  maintenance: false,
  maintenance_text: {
    title: 'Currently, the service is under maintenance',
    body: 'The service is going to be available again in a few minutes\nSorry for the inconvenience',
    enabled: false,
  },
  show_bookings_button: false,
  documentation_url: 'https://isard.gitlab.io/isardvdi-docs/',
  viewers_documentation_url: 'https://isard.gitlab.io/isardvdi-docs/user/viewers/viewers/',
  show_temporal_tab: true,
  smtp_enabled: false,
  http_port: '80',
  https_port: '443',
  bastion: { enabled: false, domain: null, ssh_port: null, individual_domains: false },
  migrations_block: false,
  disclaimer_required: false,
  login_config: {},
  status_bar: null,
};

export interface SettingsRepository {
  all(): Promise<Settings>;
  set<K extends keyof Settings>(key: K, value: Settings[K]): Promise<void>;
  /** Global maintenance or the category's flag. */
  maintenanceFor(categoryId: string): Promise<boolean>;
}

declare module 'fastify' {
  interface FastifyInstance {
    settings: SettingsRepository;
  }
}

const TTL_MS = 2000;

const plugin: FastifyPluginAsync = async (app) => {
  const { query } = app.database;
  let cached: { value: Settings; categoriesInMaintenance: Set<string>; until: number } | undefined;
  let loading: Promise<NonNullable<typeof cached>> | undefined;

  const load = async () => {
    const [rows, cats] = await Promise.all([
      query<{ key: string; value: unknown }>('SELECT key, value FROM settings'),
      query<{ id: string }>('SELECT id FROM categories WHERE maintenance'),
    ]);
    const value: Settings = structuredClone(defaultSettings);
    for (const r of rows)
      if (r.key in value || OPTIONAL_KEYS.includes(r.key))
        Object.assign(value, { [r.key]: r.value });
    cached = {
      value,
      categoriesInMaintenance: new Set(cats.map((c) => c.id)),
      until: Date.now() + TTL_MS,
    };
    return cached;
  };
  const current = async () => {
    if (cached && cached.until > Date.now()) return cached;
    loading ??= load().finally(() => (loading = undefined));
    return loading;
  };

  app.decorate('settings', {
    all: async () => (await current()).value,
    async set(key, value) {
      await query(
        `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
        [key, JSON.stringify(value)],
      );
      cached = undefined;
    },
    async maintenanceFor(categoryId) {
      const c = await current();
      return c.value.maintenance || c.categoriesInMaintenance.has(categoryId);
    },
  } satisfies SettingsRepository);
};

export default globalPlugin(plugin, 'settings-repository');
