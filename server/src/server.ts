/**
 * Process entry: environment validated at boot, app built (migrations run), demo seed when the
 * database is empty, listen, graceful shutdown on SIGTERM/SIGINT (in-flight requests drain for at
 * most 25 s; socket.io and the database close with the app).
 *
 * The first start on the embedded database (initdb, the migrations, the demo seed and its disks)
 * runs in a child process of this same entry, which ends once the database is ready; this process
 * then opens it as on any restart. That start passes through some 700 MB, and the C allocator
 * would keep about 40 MB of it resident for the server's whole life. `--prepare` does only that
 * work, in this process, and exits.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type AppConfig } from './platform/config/config.ts';
import { buildApp } from './app.ts';
import { logsRequests } from './platform/lib/logger-options.ts';
import { sourceMappedStack } from './platform/lib/source-mapped-stack.ts';
import { seedIfEmpty, type SeedResult } from './seed/index.ts';
import {
  applyConfigProviders,
  readConfigProvidersFile,
  type ConfigProvider,
} from './domains/directory/index.ts';

/** Set in the child that makes a fresh embedded database ready. */
const FIRST_START = 'VDI_PORTAL_FIRST_START';
/**
 * `--prepare`: make the database and the demo ready (migrations, seed, the demo's disks), then
 * exit without serving; the next start finds them ready.
 */
const prepareOnly = process.argv.slice(2).includes('--prepare');

let config: AppConfig;
let configProviders: ConfigProvider[];
try {
  config = loadConfig();
  configProviders = readConfigProvidersFile(config.portalConfigPath);
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

/** Runs this entry again as the first-start child; resolves to what its seed did. */
function firstStartInChild(): Promise<SeedResult | undefined> {
  return new Promise((resolve) => {
    const child = fork(process.argv[1] ?? '', process.argv.slice(2), {
      env: { ...process.env, [FIRST_START]: '1' },
      execArgv: process.execArgv,
      stdio: 'inherit',
    });
    let seed: SeedResult | undefined;
    child.on('message', (message) => (seed = message as SeedResult));
    child.on('exit', (code) => {
      // the child printed why it did not start
      if (code !== 0) process.exit(code ?? 1);
      resolve(seed);
    });
  });
}

const firstStart =
  !prepareOnly &&
  !config.databaseUrl &&
  !process.env[FIRST_START] &&
  !existsSync(join(config.dataDir, 'db', 'PG_VERSION'));
const seededByChild = firstStart ? await firstStartInChild() : undefined;

let app: FastifyInstance;
try {
  app = await buildApp(config);
} catch (err) {
  // a bad database URL, a broken config file or an operation table the handlers do not match
  const error = err instanceof Error ? err : new Error(String(err));
  console.error(`vdi-portal did not start: ${error.message}`);
  if (logsRequests(config.logLevel) && error.stack) console.error(sourceMappedStack(error.stack));
  process.exit(1);
}
// A crash is written to the log first, its stack at the TypeScript sources; Node then prints it
// as it was thrown and exits.
process.on('uncaughtExceptionMonitor', (err, origin) => app.log.fatal({ err, origin }, 'crashed'));
const seed = seededByChild ?? (await seedIfEmpty(app, { password: config.demoPassword }));
// New demo desktops are `creating`: make their disks now rather than at the next reconcile tick.
if (seed.seeded) await app.engine.reconcile();
if (process.env[FIRST_START] || prepareOnly) {
  // The first-start child, or a start asked only to prepare: the database and the demo are
  // ready; the parent (or the next start) serves them.
  process.send?.(seed);
  await app.close();
  process.exit(0);
}
// The config file's login providers, written over the administration area's at each boot.
await applyConfigProviders(app.db, configProviders, app.log);
await app.listen({ port: config.port, host: config.host });

const wildcard = config.host === '0.0.0.0' || config.host === '::';
const shown = wildcard ? 'localhost' : config.host;
const lines = [
  `vdi-portal listening on ${config.publicUrl ?? `http://${shown}:${config.port}`}`,
  `data directory: ${config.dataDir}${config.databaseUrl ? ' (database: DATABASE_URL)' : ''}`,
];
if (seed.seeded || config.demoPassword) {
  lines.push(`demo logins (category "default"): ${seed.usernames.join(', ')}`);
  if (seed.generatedPassword)
    lines.push(
      `demo password (printed once, set DEMO_PASSWORD to choose it): ${seed.generatedPassword}`,
    );
  else if (config.demoPassword) lines.push('demo password: the value of DEMO_PASSWORD');
  lines.push(
    `registration codes (sign up at /signup): ${seed.registrationCodes
      .map((c) => `${c.code} (${c.role}, ${c.groupId})`)
      .join(', ')}`,
  );
}
lines.push(
  app.mailer.delivery === 'smtp'
    ? 'account mail: sent through SMTP_URL'
    : 'account mail: no SMTP_URL, mails are written to this log (open their links from here)',
);
if (config.smtpUrl && !config.publicUrl)
  lines.push(
    'SMTP_URL without PUBLIC_URL: mail links point at the portal address above; set PUBLIC_URL to the address users reach',
  );
if (wildcard && !config.publicUrl)
  lines.push(
    `from other machines: set PUBLIC_URL (e.g. PUBLIC_URL=http://<this host>:${config.port}); consoles and live updates accept only that origin`,
  );
console.log(lines.join('\n'));

let closing = false;
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    app.log.error('shutdown took longer than allowed; exiting');
    process.exit(1);
  }, config.shutdownTimeoutMs);
  force.unref();
  try {
    await app.close();
    process.exit(0);
  } catch (err) {
    app.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
