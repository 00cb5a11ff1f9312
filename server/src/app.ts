/**
 * The whole application as one fastify instance, buildable for tests: external plugins (errors,
 * headers, compression, socket.io, upgrades, static SPA) -> app plugins (validation, access,
 * repositories, auth, event bus, socket auth) -> routes -> planned operations (501). Every route's
 * method/path/schemas/access comes from the generated operation table (lib/route.ts), which is this
 * app's auth gate; the app does not start when a table operation is neither handled nor planned.
 */
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { AppConfig } from './config.ts';
import { prettyDestination, type LineSink, type LogFormat } from './lib/log-format.ts';
import { plannedOperations } from './lib/route.ts';
import { redactSecrets } from './lib/log-redact.ts';
import { safeError } from './lib/db-errors.ts';
import { errorBody } from './lib/api-error.ts';
import { openDatabase, type Database, type Db } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import errors from './plugins/app/errors.ts';
import securityHeaders from './plugins/external/security-headers.ts';
import compress from './plugins/external/compress.ts';
import socketIo from './plugins/external/socket-io.ts';
import upgrades from './plugins/external/upgrades.ts';
import staticSpa from './plugins/external/static-spa.ts';
import validation from './plugins/app/validation.ts';
import access, { type PortalConfig } from './plugins/app/access.ts';
import sessionsRepository from './plugins/app/sessions-repository.ts';
import usersRepository from './plugins/app/users-repository.ts';
import settingsRepository from './plugins/app/settings-repository.ts';
import loginThrottle from './plugins/app/login-throttle.ts';
import auth from './plugins/app/auth.ts';
import eventBus from './plugins/app/event-bus.ts';
import desktopsRepository from './plugins/app/desktops-repository.ts';
import catalogRepositories from './plugins/app/catalog-repositories.ts';
import mediaUsageRepository from './plugins/app/media-usage-repository.ts';
import directoryRepository from './plugins/app/directory-repository.ts';
import deploymentsRepository from './plugins/app/deployments-repository.ts';
import socketAuth from './plugins/app/socket-auth.ts';
import mailer from './account/mailer.ts';
import authenticationRoutes from './routes/authentication/index.ts';
import sessionRoutes from './routes/api/session.ts';
import configRoutes from './routes/api/config.ts';
import accountRoutes from './routes/api/account.ts';
import openapiRoutes from './routes/api/openapi.ts';
import storage from './engine/storage-plugin.ts';
import engine from './engine/plugin.ts';
import mediaPlugin from './engine/media-plugin.ts';
import bookingsPlugin from './engine/booking-plugin.ts';
import desktopLifecycleRoutes from './routes/api/desktop-lifecycle.ts';
import recycleBinRoutes from './routes/api/recycle-bin.ts';
import storageRoutes from './routes/api/storage.ts';
import templatesMediaRoutes from './routes/api/templates-media.ts';
import mediaRoutes from './routes/api/media.ts';
import templateRoutes from './routes/api/templates.ts';
import allowedRoutes from './routes/api/allowed.ts';
import deploymentRoutes from './routes/api/deployments.ts';
import directViewerRoutes from './routes/api/direct-viewer.ts';
import bookingRoutes from './routes/api/bookings.ts';
import planningRoutes from './routes/api/planning.ts';
import reservableRoutes from './routes/api/reservables.ts';
import roleVisibilityRoutes from './routes/api/role-visibility.ts';
import admin from './admin/plugin.ts';
import adminUserRoutes from './routes/api/admin-users.ts';
import adminGroupRoutes from './routes/api/admin-groups.ts';
import adminCategoryRoutes from './routes/api/admin-categories.ts';
import adminAuditRoutes from './routes/api/admin-audit.ts';
import adminSettingsRoutes from './routes/api/admin-settings.ts';
import adminReservableRoutes from './routes/api/admin-reservables.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
    database: Database;
    db: Db;
  }
}

export interface BuildOptions {
  /** an already open database (tests); otherwise opened from the config */
  database?: Database;
  /** role-visibility config object instead of the file (tests) */
  portalConfig?: PortalConfig;
  /** where log lines go instead of stdout (tests read what the server logs) */
  logSink?: LineSink;
}

const SECRET_QUERY = /([?&](?:token|jwt|password|access_token)=)[^&]*/gi;

/**
 * Logger options: never logs headers (tokens, cookies) nor secret-looking query values; every line
 * is also cleaned of anything shaped like a secret (lib/log-redact.ts), and errors are logged
 * without the parameters of a failed statement. `pretty` writes readable one-line logs, `json`
 * pino's JSON lines.
 */
export function loggerOptions(
  level: string,
  format: LogFormat = 'json',
  out?: LineSink,
): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  const stream = format === 'pretty' ? prettyDestination(out) : out;
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'password',
        'jwt',
        'token',
        '*.password',
        '*.jwt',
        '*.token',
      ],
      censor: '[redacted]',
    },
    hooks: { streamWrite: redactSecrets },
    serializers: {
      err: (err: Error) => {
        const safe = safeError(err);
        return { ...safe, stack: safe.stack ?? '' };
      },
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.replace(SECRET_QUERY, '$1[redacted]'),
        ip: req.ip,
      }),
    },
  };
}

/** One log line per request and response only when debugging. */
export function logsRequests(level: string): boolean {
  return level === 'debug' || level === 'trace';
}

/** The logger and its request-logging switch for a config; `out` replaces stdout (tests). */
export function loggingOptions(
  config: Pick<AppConfig, 'logLevel' | 'logFormat'>,
  out?: LineSink,
): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  return {
    logger: loggerOptions(config.logLevel, config.logFormat, out),
    logController: new LogController({ disableRequestLogging: !logsRequests(config.logLevel) }),
  };
}

export async function buildApp(
  config: AppConfig,
  options: BuildOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    ...loggingOptions(config, options.logSink),
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // A URL the router cannot decode gets the same error body as every other failure.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      void reply
        .code(400)
        .type('application/json')
        .send(errorBody('bad_request', `Malformed request: ${error.message}`, 'bad_request'));
    },
  });
  const database =
    options.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  try {
    await migrate(database);
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('db', database.db);
  // Runs after every other onClose hook (socket.io, intervals): the database goes last.
  app.addHook('onClose', async () => database.close());

  try {
    await registerAll(app, options);
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return app;
}

async function registerAll(app: FastifyInstance, options: BuildOptions): Promise<void> {
  await app.register(errors);
  await app.register(securityHeaders);
  // before every route: compression hooks are attached to the routes registered after it
  await app.register(compress);
  await app.register(socketIo);
  await app.register(upgrades);
  await app.register(staticSpa);

  await app.register(validation);
  await app.register(access, options.portalConfig ? { portalConfig: options.portalConfig } : {});
  await app.register(sessionsRepository);
  await app.register(usersRepository);
  await app.register(settingsRepository);
  await app.register(loginThrottle);
  await app.register(auth);
  await app.register(eventBus);
  await app.register(desktopsRepository);
  await app.register(catalogRepositories);
  await app.register(mediaUsageRepository);
  await app.register(directoryRepository);
  await app.register(deploymentsRepository);
  await app.register(socketAuth);
  await app.register(mailer, { logSink: options.logSink });
  // before the engine: its boot disk check runs before the engine reconciles
  await app.register(storage);
  await app.register(engine);
  await app.register(mediaPlugin);
  await app.register(bookingsPlugin);
  await app.register(admin);

  await app.register(authenticationRoutes);
  await app.register(sessionRoutes);
  await app.register(configRoutes);
  await app.register(accountRoutes);
  await app.register(desktopLifecycleRoutes);
  await app.register(recycleBinRoutes);
  await app.register(storageRoutes);
  await app.register(templatesMediaRoutes);
  await app.register(mediaRoutes);
  await app.register(templateRoutes);
  await app.register(allowedRoutes);
  await app.register(deploymentRoutes);
  await app.register(directViewerRoutes);
  await app.register(bookingRoutes);
  await app.register(planningRoutes);
  await app.register(reservableRoutes);
  await app.register(roleVisibilityRoutes);
  await app.register(adminUserRoutes);
  await app.register(adminGroupRoutes);
  await app.register(adminCategoryRoutes);
  await app.register(adminAuditRoutes);
  await app.register(adminSettingsRoutes);
  await app.register(adminReservableRoutes);
  // after every route plugin: checks the table against the handlers, the rest answers 501
  await app.register(plannedOperations);
  await app.register(openapiRoutes);
  await app.ready();
}
