/**
 * Runtime configuration from the environment (docs/contracts.md), validated at boot: a bad value
 * stops the process with a clear message instead of a surprise later.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import type { LogFormat } from '../lib/log-format.ts';
import { allowedHostKeys } from '../lib/safe-fetch.ts';
import type { NetworkMode } from '../hypervisor/host-networks.ts';

export interface AppConfig {
  /**
   * This node's name among the portal nodes on one database (NODE_NAME, else `<host name>:<PORT>`):
   * shown by GET /api/v3/health and on every log line.
   */
  nodeName: string;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  demoPassword: string | undefined;
  /** role-visibility config file (PORTAL_CONFIG, else config/portal.json when present) */
  portalConfigPath: string | undefined;
  /** seconds */
  sessionExpiration: number;
  sessionMaxRenew: number;
  sessionMaxTime: number;
  clockLeeway: number;
  /** built SPA; not served when missing */
  distDir: string;
  logLevel: string;
  /** `pretty`: readable one-line logs (default); `json`: pino JSON lines for log shippers */
  logFormat: LogFormat;
  /** how often sockets are checked against their session (ms) */
  socketSweepMs: number;
  /** how long a verified session stays cached in memory (ms); revocation on this node clears it at once */
  sessionCacheMs: number;
  /**
   * how long a lease of background work lasts unless its process renews it (ms): a node killed in
   * the middle of a job leaves it to another node within this and a third of it
   */
  workLeaseMs: number;
  /** seed demo data when the database has no users */
  seed: boolean;
  /** trust X-Forwarded-For (behind a reverse proxy) */
  trustProxy: boolean;
  /** graceful shutdown limit (ms) */
  shutdownTimeoutMs: number;
  /** hypervisor driver (HYPERVISOR, `qemu`) and QEMU acceleration (QEMU_ACCEL, `tcg` or `kvm`) */
  hypervisor: 'qemu' | 'none';
  qemuAccel: 'tcg' | 'kvm';
  /**
   * The libvirt host desktops run on (HYPERVISOR_URI, e.g. `qemu+ssh://vdi@host1/system` or
   * `qemu:///session`); unset, the local QEMU driver runs them on this machine.
   */
  hypervisorUri: string | undefined;
  /**
   * Owner given to the disk files the portal makes for a libvirt host (HYPERVISOR_DISK_OWNER,
   * `uid:gid`): the account a session daemon's QEMU runs as, when it is not the portal's. A system
   * daemon sets the owner itself.
   */
  hypervisorDiskOwner: { uid: number; gid: number } | undefined;
  /**
   * How far a host's memory is promised to desktops, as a percentage of its memory capacity
   * (HYPERVISOR_MEMORY_OVERCOMMIT, default 200): QEMU gives a guest its memory as it touches it,
   * so desktops that idle use a fraction of what they declare, as on oVirt's "desktop load".
   * Placement refuses a start (`hypervisors_full`) past this.
   */
  memoryOvercommitPercent: number;
  /**
   * The desktops' networks (`platform/hypervisor/host-networks.ts`): NETWORK_MODE `auto` (bridges
   * with dnsmasq and NAT as root, QEMU user-mode networking otherwise), `bridge`, `user` or `none`;
   * NETWORK_PREFIX names the bridge, TAP devices and NAT table (default `vdi`); NAT_SUBNET is the
   * NAT network's /24 as three octets (default `10.87.0`).
   */
  network: { mode: NetworkMode; prefix: string; natSubnet: string };
  /** seed the "Tiny Linux" template (a real Linux guest built from Debian packages) with the demo */
  tinyLinux: boolean;
  /** a running desktop nobody watches is paused after this long (ms) */
  idleGraceMs: number;
  /** how long a guest gets to power off before it is stopped hard (ms) */
  shutdownGraceMs: number;
  /** how often every running or transitional desktop is settled against what the hypervisor runs (ms) */
  reconcileMs: number;
  /**
   * the longest a password check may expect to wait for a hashing slot before it is refused with
   * 503 `server_busy` (ms): what keeps a storm of sign-ins from queueing without end
   */
  passwordQueueBudgetMs: number;
  /** extra browser Origins allowed on websocket endpoints besides the portal's own (ALLOWED_ORIGINS, comma-separated) */
  allowedOrigins: string[];
  /**
   * The portal's public origin (PUBLIC_URL, e.g. `https://vdi.example.org`): the only origin browser
   * websockets may come from (with ALLOWED_ORIGINS) and the SPICE proxy written into `.vv` files.
   * Unset: `http://<HOST>:<listening port>` (the loopback names for a wildcard or loopback HOST).
   */
  publicUrl: string | undefined;
  /** a SPICE tunnel credential (and the SPICE password of its `.vv`) is usable this long after the download (ms) */
  spiceCredentialTtlMs: number;
  /** once a SPICE session opened its first channel, its other channels may follow for this long (ms) */
  spiceChannelWindowMs: number;
  /** build the demo template disk and media at boot when missing */
  prepareImages: boolean;
  /**
   * Hosts a media URL may name whatever their addresses (MEDIA_ALLOWED_HOSTS, comma-separated
   * `host` or `host:port`; none by default): a local mirror, or the test and demo source.
   */
  mediaAllowedHosts: string[];
  /** the largest medium a user may download (MEDIA_MAX_SIZE, bytes; default 16 GiB) */
  mediaMaxBytes: number;
  /** a media download must connect within this (ms) */
  mediaConnectTimeoutMs: number;
  /** a media download that receives nothing for this long fails (ms) */
  mediaStallTimeoutMs: number;
  /** media downloads running at once, per user and in all */
  mediaDownloadsPerUser: number;
  mediaDownloadsTotal: number;
  /**
   * Outgoing mail (SMTP_URL, e.g. `smtps://user:pass@mail.example.org:465`); unset, mails are
   * written to the log instead, links included, so a self-hosted portal works without a server.
   */
  smtpUrl: string | undefined;
  /**
   * guacd, the Guacamole proxy daemon browser RDP goes through (GUACD_HOST, GUACD_PORT; default
   * `127.0.0.1:4822`; in production the `guacamole/guacd` container)
   */
  guacd: { host: string; port: number };
  /** the From of account mails (MAIL_FROM) */
  mailFrom: string;
  /**
   * The bastion: the port its SSH server listens on (BASTION_SSH_PORT; unset = no SSH bastion),
   * the port that passes HTTPS through to guests by SNI (BASTION_HTTPS_PORT; unset = none) and
   * the portal's own SSH key, which desktops' guests trust (BASTION_KEY_FILE; unset =
   * `<DATA_DIR>/bastion/portal_ed25519`, made at the first need).
   */
  bastion: {
    sshPort: number | undefined;
    httpsPort: number | undefined;
    keyFile: string | undefined;
  };
}

const envSchema = {
  type: 'object',
  properties: {
    PORT: { type: 'string', pattern: '^\\d{1,5}$' },
    HOST: { type: 'string', minLength: 1 },
    DATA_DIR: { type: 'string', minLength: 1 },
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    DEMO_PASSWORD: { type: 'string', minLength: 4, maxLength: 1024 },
    PORTAL_CONFIG: { type: 'string', minLength: 1 },
    SESSION_EXPIRATION: { type: 'string', pattern: '^\\d+[smh]?$' },
    DESKTOP_STOP_TIMEOUT: { type: 'string', pattern: '^\\d+[smh]?$' },
    SESSION_MAX_RENEW: { type: 'string', pattern: '^\\d+[smh]?$' },
    SESSION_MAX_TIME: { type: 'string', pattern: '^\\d+[smh]?$' },
    HYPERVISOR: { enum: ['qemu', 'none'] },
    QEMU_ACCEL: { enum: ['tcg', 'kvm'] },
    HYPERVISOR_DISK_OWNER: { type: 'string', pattern: '^\\d{1,10}:\\d{1,10}$' },
    HYPERVISOR_MEMORY_OVERCOMMIT: { type: 'string', pattern: '^[1-9]\\d{2,3}$' },
    HYPERVISOR_URI: {
      type: 'string',
      pattern: '^qemu(\\+(ssh|tcp|tls|unix|libssh2?))?://[^\\s]*/(system|session)(\\?[^\\s]*)?$',
    },
    NETWORK_MODE: { enum: ['auto', 'bridge', 'user', 'none'] },
    NETWORK_PREFIX: { type: 'string', pattern: '^[a-z0-9]{1,6}$' },
    NAT_SUBNET: { type: 'string', pattern: '^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$' },
    ALLOWED_ORIGINS: { type: 'string', pattern: '^(https?://[^,\\s]+)(,https?://[^,\\s]+)*$' },
    LOG_LEVEL: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    LOG_FORMAT: { enum: ['pretty', 'json'] },
    TRUST_PROXY: { enum: ['true', 'false', '1', '0'] },
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^\\s]+$' },
    MEDIA_ALLOWED_HOSTS: { type: 'string', pattern: '^[^,\\s]+(,[^,\\s]+)*$' },
    MEDIA_MAX_SIZE: { type: 'string', pattern: '^\\d+[KMGT]?$' },
    SMTP_URL: { type: 'string', pattern: '^smtps?://[^\\s]+$' },
    MAIL_FROM: { type: 'string', minLength: 3, maxLength: 254 },
    NODE_NAME: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$' },
    WORK_LEASE: { type: 'string', pattern: '^\\d+[smh]?$' },
    GUACD_HOST: { type: 'string', pattern: '^[A-Za-z0-9.:_-]{1,253}$' },
    GUACD_PORT: { type: 'string', pattern: '^\\d{1,5}$' },
    BASTION_SSH_PORT: { type: 'string', pattern: '^\\d{1,5}$' },
    BASTION_HTTPS_PORT: { type: 'string', pattern: '^\\d{1,5}$' },
    BASTION_KEY_FILE: { type: 'string', minLength: 1 },
  },
} as const;

/**
 * PUBLIC_URL as an origin (`https://vdi.example.org`, `http://10.0.0.5:8080`): scheme, host and
 * optional port only; a path, query, fragment or credentials are refused.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`invalid environment: PUBLIC_URL ${value} is not a URL`);
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username ||
    url.password ||
    url.pathname !== '/' ||
    url.search ||
    url.hash
  )
    throw new Error(
      `invalid environment: PUBLIC_URL must be an http(s) origin such as https://vdi.example.org, not ${value}`,
    );
  return url.origin;
}

/** MEDIA_ALLOWED_HOSTS entries, each checked to be a plain `host` or `host:port`. */
export function parseMediaAllowedHosts(value: string | undefined): string[] {
  if (!value) return [];
  const entries = value.split(',');
  for (const entry of entries) {
    try {
      allowedHostKeys(entry);
    } catch {
      throw new Error(
        `invalid environment: MEDIA_ALLOWED_HOSTS entry ${entry} is not a host[:port]`,
      );
    }
  }
  return entries;
}

/** "1073741824", "512M", "16G" (binary units) -> bytes */
export function parseByteSize(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  const m = /^(\d+)([KMGT]?)$/.exec(value);
  if (!m) throw new Error(`bad size ${value}`);
  return Number(m[1]) * 1024 ** ' KMGT'.indexOf(m[2] || ' ');
}

/** "1001:1001" -> { uid, gid } */
function parseOwner(value: string | undefined): { uid: number; gid: number } | undefined {
  const m = value ? /^(\d+):(\d+)$/.exec(value) : null;
  return m ? { uid: Number(m[1]), gid: Number(m[2]) } : undefined;
}

/** "300", "300s", "5m", "8h" -> seconds */
export function parseDuration(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  const m = /^(\d+)([smh]?)$/.exec(value);
  if (!m) throw new Error(`bad duration ${value}`);
  const n = Number(m[1]);
  return m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : n;
}

/** The environment's validator, compiled on first use (a test worker loads many configurations). */
let envValidator: ValidateFunction | undefined;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): AppConfig {
  const present = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k in envSchema.properties && v !== ''),
  );
  envValidator ??= new Ajv({ allErrors: true }).compile(envSchema);
  const validate = envValidator;
  if (!validate(present)) {
    const problems = (validate.errors ?? [])
      .map((e) => `${e.instancePath.slice(1)} ${e.message ?? ''}`)
      .join('; ');
    throw new Error(`invalid environment: ${problems}`);
  }
  const port = Number(env.PORT ?? 8080);
  if (port > 65535) throw new Error('invalid environment: PORT out of range');
  const defaultPortal = resolve(cwd, 'config/portal.json');
  const config: AppConfig = {
    nodeName: env.NODE_NAME || `${hostname()}:${port}`,
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: resolve(cwd, env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    demoPassword: env.DEMO_PASSWORD || undefined,
    portalConfigPath: env.PORTAL_CONFIG
      ? resolve(cwd, env.PORTAL_CONFIG)
      : existsSync(defaultPortal)
        ? defaultPortal
        : undefined,
    sessionExpiration: parseDuration(env.SESSION_EXPIRATION, 300),
    sessionMaxRenew: parseDuration(env.SESSION_MAX_RENEW, 1800),
    sessionMaxTime: parseDuration(env.SESSION_MAX_TIME, 8 * 3600),
    clockLeeway: 60,
    distDir: resolve(cwd, 'dist'),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: env.LOG_FORMAT === 'json' ? 'json' : 'pretty',
    socketSweepMs: 5000,
    sessionCacheMs: 1000,
    workLeaseMs: parseDuration(env.WORK_LEASE, 15) * 1000,
    seed: true,
    trustProxy: env.TRUST_PROXY === 'true' || env.TRUST_PROXY === '1',
    shutdownTimeoutMs: 25_000,
    hypervisor: env.HYPERVISOR === 'none' ? 'none' : 'qemu',
    qemuAccel: env.QEMU_ACCEL === 'kvm' ? 'kvm' : 'tcg',
    hypervisorUri: env.HYPERVISOR_URI || undefined,
    hypervisorDiskOwner: parseOwner(env.HYPERVISOR_DISK_OWNER),
    memoryOvercommitPercent: Number(env.HYPERVISOR_MEMORY_OVERCOMMIT || 200),
    network: {
      mode: (env.NETWORK_MODE as NetworkMode | undefined) ?? 'auto',
      prefix: env.NETWORK_PREFIX ?? 'vdi',
      natSubnet: env.NAT_SUBNET ?? '10.87.0',
    },
    tinyLinux: true,
    idleGraceMs: 60_000,
    shutdownGraceMs: parseDuration(env.DESKTOP_STOP_TIMEOUT, 20) * 1000,
    reconcileMs: 5_000,
    passwordQueueBudgetMs: 1000,
    allowedOrigins: env.ALLOWED_ORIGINS ? env.ALLOWED_ORIGINS.split(',') : [],
    publicUrl: env.PUBLIC_URL ? parsePublicUrl(env.PUBLIC_URL) : undefined,
    spiceCredentialTtlMs: 60_000,
    spiceChannelWindowMs: 10_000,
    prepareImages: true,
    mediaAllowedHosts: parseMediaAllowedHosts(env.MEDIA_ALLOWED_HOSTS),
    mediaMaxBytes: parseByteSize(env.MEDIA_MAX_SIZE, 16 * 1024 ** 3),
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM ?? 'VDI portal <no-reply@localhost>',
    mediaConnectTimeoutMs: 30_000,
    mediaStallTimeoutMs: 60_000,
    mediaDownloadsPerUser: 3,
    mediaDownloadsTotal: 10,
    guacd: { host: env.GUACD_HOST || '127.0.0.1', port: Number(env.GUACD_PORT || 4822) },
    bastion: {
      sshPort: env.BASTION_SSH_PORT ? Number(env.BASTION_SSH_PORT) : undefined,
      httpsPort: env.BASTION_HTTPS_PORT ? Number(env.BASTION_HTTPS_PORT) : undefined,
      keyFile: env.BASTION_KEY_FILE ? resolve(cwd, env.BASTION_KEY_FILE) : undefined,
    },
  };
  if ((config.bastion.sshPort ?? 0) > 65535 || (config.bastion.httpsPort ?? 0) > 65535)
    throw new Error('invalid environment: BASTION_SSH_PORT or BASTION_HTTPS_PORT out of range');
  if (config.guacd.port < 1 || config.guacd.port > 65535)
    throw new Error('invalid environment: GUACD_PORT out of range');
  // Renewed every third of it: a shorter lease is lost to a busy event loop.
  if (config.workLeaseMs < 3000) throw new Error('invalid environment: WORK_LEASE under 3s');
  if (
    config.sessionExpiration > config.sessionMaxTime ||
    config.sessionMaxRenew > config.sessionMaxTime
  ) {
    throw new Error(
      'invalid environment: SESSION_EXPIRATION and SESSION_MAX_RENEW must not exceed SESSION_MAX_TIME',
    );
  }
  return config;
}
