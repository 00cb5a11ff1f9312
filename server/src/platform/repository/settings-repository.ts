/**
 * Portal settings (key -> jsonb) merged over code defaults, cached for two seconds (a write drops
 * the cache on every node through the cluster bus's `settings.changed`): maintenance,
 * its text, the /user/config flags, the account policies (password rules, address verification,
 * disclaimer, second factor) and the disclaimer's text, notifications, user migration, VPN.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';

export interface Settings {
  maintenance: boolean;
  maintenance_text: { title: string; body: string; enabled: boolean };
  show_bookings_button: boolean;
  documentation_url: string;
  viewers_documentation_url: string;
  show_temporal_tab: boolean;
  http_port: string;
  https_port: string;
  bastion: {
    enabled: boolean;
    domain: string | null;
    ssh_port: string | null;
    individual_domains: boolean;
    /** the roles that may use it; absent or empty = every role */
    roles?: string[];
  };
  login_config: Record<string, unknown>;
  status_bar: Record<string, unknown> | null;
  /**
   * Recycle-bin retention in hours (0 = deleted at once, null = kept forever) and the initial
   * "send to the recycle bin" choice; unset, the recycle bin uses its own defaults.
   */
  recycle_bin_cutoff_time?: number | null;
  recycle_bin_default_delete?: boolean;
  /**
   * Account policies by (category, role, provider): the most specific match wins (exact category
   * and role, then category with role "all", then "all" with the role, then "all" and "all").
   */
  account_policies: AccountPolicy[];
  /** The disclaimer a policy with `disclaimer: true` asks users to accept, per language. */
  disclaimer_text: LocalizedTexts;
  /** Notifications shown to users on a trigger (login, start_desktop) in a display (modal, fullpage). */
  notifications: NotificationSetting[];
  /** User migration between accounts of the same category. */
  migration: {
    export: boolean;
    import: boolean;
    /** Forces every non-excepted user to the export page (the config's migrations_block). */
    force: boolean;
    /** Roles exempt from force. */
    force_exceptions: string[];
    check_quotas: boolean;
    /** What happens to the origin account after its items moved. */
    action_after_migrate: 'none' | 'disable' | 'delete';
  };
  /** WireGuard VPN of the users: the endpoint clients dial and the networks. */
  vpn: {
    /** Host name in the client's Endpoint; null = the host of PUBLIC_URL. */
    endpoint_host: string | null;
    port: number;
    /** The users' network: the server's tunnel address is its first host, users get the others. */
    users_net: string;
    /**
     * The desktops' networks a client routes into the tunnel (besides the server's tunnel
     * address); null = the subnet of the VPN network (the NAT network's, NAT_SUBNET, when there
     * is no VPN network).
     */
    guests_nets: string | null;
    mtu: number;
  };
}

export interface PasswordPolicy {
  length: number;
  uppercase: number;
  lowercase: number;
  digits: number;
  special_characters: number;
  /** The last N passwords may not be reused (0 = no check). */
  old_passwords: number;
  not_username: boolean;
  /** Days before a local password must be changed at login (0 = never). */
  expiration: number;
}

export interface AccountPolicy {
  category: string | 'all';
  role: string | 'all';
  provider: string | 'all';
  password: PasswordPolicy;
  email_verification: boolean;
  disclaimer: boolean;
  /**
   * Whether a second factor (any kind: an authenticator app today) is required: a user without one
   * enrols at the login before the session is issued. Absent in policies stored before it: false.
   */
  second_factor?: boolean;
}

export interface LocalizedTexts {
  default: string;
  lang: Record<string, { title: string; body: string; footer: string }>;
}

export interface NotificationSetting {
  id: string;
  enabled: boolean;
  trigger: 'login' | 'start_desktop';
  display: ('modal' | 'fullpage')[];
  /** Shown once per user, then recorded as seen. */
  once: boolean;
  force_accept: boolean;
  /** Epoch seconds after which it is no longer shown (null = always). */
  ignore_after: number | null;
  /** Roles it is for (empty = every role). */
  roles: string[];
  text: LocalizedTexts;
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
  http_port: '80',
  https_port: '443',
  bastion: { enabled: false, domain: null, ssh_port: null, individual_domains: false },
  login_config: {},
  status_bar: null,
  account_policies: [
    {
      category: 'all',
      role: 'all',
      provider: 'all',
      password: {
        length: 8,
        uppercase: 0,
        lowercase: 0,
        digits: 0,
        special_characters: 0,
        old_passwords: 0,
        not_username: true,
        expiration: 0,
      },
      email_verification: false,
      disclaimer: false,
      second_factor: false,
    },
  ],
  // The default text in every portal language: a user reads their language's, else the default one's.
  disclaimer_text: {
    default: 'en',
    lang: {
      en: {
        title: 'Terms of use',
        body: '<p>This portal is for work and study. Your activity may be logged.</p>',
        footer: '<p>Accept to continue, or decline to log out.</p>',
      },
      ca: {
        title: 'Condicions d’ús',
        body: '<p>Aquest portal és per a la feina i l’estudi. La teva activitat es pot registrar.</p>',
        footer: '<p>Accepta per continuar o rebutja per tancar la sessió.</p>',
      },
      de: {
        title: 'Nutzungsbedingungen',
        body: '<p>Dieses Portal dient der Arbeit und dem Studium. Ihre Aktivität kann protokolliert werden.</p>',
        footer: '<p>Akzeptieren Sie, um fortzufahren, oder lehnen Sie ab, um sich abzumelden.</p>',
      },
      eo: {
        title: 'Uzkondiĉoj',
        body: '<p>Ĉi tiu portalo estas por laboro kaj studado. Via agado povas esti protokolata.</p>',
        footer: '<p>Akceptu por daŭrigi, aŭ rifuzu por elsaluti.</p>',
      },
      es: {
        title: 'Condiciones de uso',
        body: '<p>Este portal es para el trabajo y el estudio. Tu actividad puede quedar registrada.</p>',
        footer: '<p>Acepta para continuar o rechaza para cerrar la sesión.</p>',
      },
      eu: {
        title: 'Erabilera-baldintzak',
        body: '<p>Atari hau lanerako eta ikasketetarako da. Zure jarduera erregistra daiteke.</p>',
        footer: '<p>Onartu jarraitzeko, edo ukatu saioa amaitzeko.</p>',
      },
      fr: {
        title: 'Conditions d’utilisation',
        body: '<p>Ce portail est destiné au travail et aux études. Votre activité peut être journalisée.</p>',
        footer: '<p>Acceptez pour continuer, ou refusez pour vous déconnecter.</p>',
      },
      hi: {
        title: 'उपयोग की शर्तें',
        body: '<p>यह पोर्टल काम और पढ़ाई के लिए है। आपकी गतिविधि लॉग की जा सकती है।</p>',
        footer: '<p>जारी रखने के लिए स्वीकार करें, या लॉग आउट करने के लिए अस्वीकार करें।</p>',
      },
      ko: {
        title: '이용 약관',
        body: '<p>이 포털은 업무와 학습을 위한 것입니다. 활동이 기록될 수 있습니다.</p>',
        footer: '<p>계속하려면 동의하고, 로그아웃하려면 거부하세요.</p>',
      },
      pl: {
        title: 'Warunki korzystania',
        body: '<p>Ten portal służy do pracy i nauki. Twoja aktywność może być rejestrowana.</p>',
        footer: '<p>Zaakceptuj, aby kontynuować, lub odrzuć, aby się wylogować.</p>',
      },
      ru: {
        title: 'Условия использования',
        body: '<p>Этот портал предназначен для работы и учёбы. Ваши действия могут записываться в журнал.</p>',
        footer: '<p>Примите условия, чтобы продолжить, или откажитесь, чтобы выйти.</p>',
      },
      zh_Hans: {
        title: '使用条款',
        body: '<p>本门户用于工作和学习。你的活动可能会被记录。</p>',
        footer: '<p>接受以继续，或拒绝以退出登录。</p>',
      },
    },
  },
  notifications: [],
  migration: {
    export: true,
    import: true,
    force: false,
    force_exceptions: ['admin'],
    check_quotas: true,
    action_after_migrate: 'disable',
  },
  vpn: {
    endpoint_host: null,
    port: 443,
    users_net: '10.0.0.0/16',
    guests_nets: null,
    mtu: 1420,
  },
};

export interface SettingsRepository {
  all(): Promise<Settings>;
  set<K extends keyof Settings>(key: K, value: Settings[K]): Promise<void>;
  /** Drops the cache on every node, so a value written elsewhere (in a transaction) is read at once. */
  invalidate(): void;
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

  const drop = () => {
    cached = undefined;
  };
  app.cluster.on('settings.changed', drop);
  app.cluster.on('resync', drop);

  app.decorate('settings', {
    all: async () => (await current()).value,
    async set(key, value) {
      await query(
        `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
        [key, JSON.stringify(value)],
      );
      app.cluster.publish({ kind: 'settings.changed' });
    },
    invalidate() {
      app.cluster.publish({ kind: 'settings.changed' });
    },
    async maintenanceFor(categoryId) {
      const c = await current();
      return c.value.maintenance || c.categoriesInMaintenance.has(categoryId);
    },
  } satisfies SettingsRepository);
};

export default globalPlugin(plugin, 'settings-repository');
