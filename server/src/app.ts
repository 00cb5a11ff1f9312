/**
 * The whole application as one fastify instance, buildable for tests: platform plugins (errors,
 * headers, compression, socket.io, upgrades, static SPA, validation, access, auth, event bus,
 * socket auth) -> domain repositories and plugins -> domain routes -> planned operations (501).
 * Domains are imported only through their index.ts. Every route's method/path/schemas/access comes
 * from the generated operation table (platform/http/route.ts), which is this app's auth gate; the
 * app does not start when a table operation is neither handled nor planned.
 */
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { AppConfig } from './platform/config/config.ts';
import { prettyDestination, type LineSink, type LogFormat } from './platform/lib/log-format.ts';
import { plannedOperations } from './platform/http/route.ts';
import { redactSecrets } from './platform/lib/log-redact.ts';
import { safeError } from './platform/lib/db-errors.ts';
import { errorBody } from './platform/http/api-error.ts';
import { openDatabase, type Database, type Db } from './platform/db/client.ts';
import { migrate } from './platform/db/migrate.ts';
import errors from './platform/http/errors.ts';
import securityHeaders from './platform/http/security-headers.ts';
import compress from './platform/http/compress.ts';
import socketIo from './platform/http/socket-io.ts';
import upgrades from './platform/http/upgrades.ts';
import staticSpa from './platform/http/static-spa.ts';
import validation from './platform/http/validation.ts';
import access, { type PortalConfig } from './platform/http/access-plugin.ts';
import sessionsRepository from './platform/auth/sessions-repository.ts';
import usersRepository from './domains/directory/users-repository.ts';
import settingsRepository from './platform/repository/settings-repository.ts';
import loginThrottle from './platform/auth/login-throttle.ts';
import auth from './platform/auth/auth.ts';
import eventBus from './platform/events/event-bus.ts';
import desktopsRepository from './domains/desktops/desktops-repository.ts';
import catalogRepositories from './domains/templates/catalog-repositories.ts';
import mediaUsageRepository from './domains/media/media-usage-repository.ts';
import directoryRepository from './domains/directory/directory-repository.ts';
import deploymentsRepository from './domains/deployments/deployments-repository.ts';
import socketAuth from './platform/auth/socket-auth.ts';
import mailer from './domains/account/mailer.ts';
import authenticationRoutes from './domains/account/routes/authentication.ts';
import sessionRoutes from './domains/account/routes/session.ts';
import configRoutes from './domains/account/routes/config.ts';
import accountRoutes from './domains/account/routes/account.ts';
import openapiRoutes from './platform/http/openapi-routes.ts';
import storagePlugin from './domains/storage/plugin.ts';
import desktopsPlugin from './domains/desktops/plugin.ts';
import recycleBinPlugin from './domains/recycle-bin/plugin.ts';
import templatesPlugin from './domains/templates/plugin.ts';
import deploymentsPlugin from './domains/deployments/plugin.ts';
import viewersPlugin from './domains/viewers/plugin.ts';
import mediaPlugin from './domains/media/plugin.ts';
import bookingsPlugin from './domains/bookings/plugin.ts';
import desktopLifecycleRoutes from './domains/desktops/routes/lifecycle.ts';
import recycleBinRoutes from './domains/recycle-bin/routes.ts';
import storageRoutes from './domains/storage/routes.ts';
import templatesMediaRoutes from './domains/media/routes/templates-media.ts';
import mediaRoutes from './domains/media/routes/media.ts';
import templateRoutes from './domains/templates/routes.ts';
import allowedRoutes from './domains/desktops/routes/allowed.ts';
import deploymentRoutes from './domains/deployments/routes.ts';
import directViewerRoutes from './domains/viewers/routes.ts';
import bookingRoutes from './domains/bookings/routes/bookings.ts';
import planningRoutes from './domains/bookings/routes/planning.ts';
import reservableRoutes from './domains/bookings/routes/reservables.ts';
import roleVisibilityRoutes from './domains/directory/routes/role-visibility.ts';
import directoryPlugin from './domains/directory/plugin.ts';
import adminUserRoutes from './domains/directory/routes/users.ts';
import adminGroupRoutes from './domains/directory/routes/groups.ts';
import adminCategoryRoutes from './domains/directory/routes/categories.ts';
import adminAuditRoutes from './domains/directory/routes/audit.ts';
import adminSettingsRoutes from './domains/directory/routes/settings.ts';
import adminReservableRoutes from './domains/bookings/routes/admin-reservables.ts';

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
 * is also cleaned of anything shaped like a secret (platform/lib/log-redact.ts), and errors are logged
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
  // before the desktops: its boot disk check runs before the desktop engine reconciles
  await app.register(storagePlugin);
  // in this order: each one's boot work runs after the previous one's
  await app.register(desktopsPlugin);
  await app.register(recycleBinPlugin);
  await app.register(templatesPlugin);
  await app.register(deploymentsPlugin);
  await app.register(viewersPlugin);
  await app.register(mediaPlugin);
  await app.register(bookingsPlugin);
  await app.register(directoryPlugin);

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
