/**
 * The whole application as one fastify instance, buildable for tests: platform plugins (errors,
 * headers, compression, socket.io, cluster bus, background work, static SPA, validation, access, auth, event bus,
 * socket auth) -> domain repositories and plugins -> domain routes -> planned operations (501).
 * Domains are imported only through their index.ts. Every route's method/path/schemas/access comes
 * from the generated operation table (platform/http/route.ts), which is this app's auth gate; the
 * app does not start when a table operation is neither handled nor planned.
 */
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { AppConfig } from './platform/config/config.ts';
import { configurePasswordGate } from './platform/auth/passwords.ts';
import type { LineSink } from './platform/lib/log-format.ts';
import { loggingOptions } from './platform/lib/logger-options.ts';
import { plannedOperations } from './platform/http/route.ts';
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
import {
  usersRepository,
  directoryRepository,
  roleVisibilityRoutes,
  directoryPlugin,
  adminUserRoutes,
  adminGroupRoutes,
  adminCategoryRoutes,
  adminLdapProviderRoutes,
  adminOidcProviderRoutes,
  adminSamlProviderRoutes,
  adminAuditRoutes,
  adminNodeRoutes,
  adminSettingsRoutes,
} from './domains/directory/index.ts';
import settingsRepository from './platform/repository/settings-repository.ts';
import loginThrottle from './platform/auth/login-throttle.ts';
import auth from './platform/auth/auth.ts';
import eventBus from './platform/events/event-bus.ts';
import clusterBus from './platform/events/cluster-bus.ts';
import work from './platform/jobs/work-plugin.ts';
import {
  desktopsRepository,
  desktopsPlugin,
  desktopLifecycleRoutes,
  adminHypervisorRoutes,
  adminNetworkRoutes,
  allowedRoutes,
} from './domains/desktops/index.ts';
import { catalogRepositories, templatesPlugin, templateRoutes } from './domains/templates/index.ts';
import {
  mediaUsageRepository,
  mediaPlugin,
  templatesMediaRoutes,
  mediaRoutes,
} from './domains/media/index.ts';
import {
  deploymentsRepository,
  deploymentsPlugin,
  deploymentRoutes,
} from './domains/deployments/index.ts';
import socketAuth from './platform/auth/socket-auth.ts';
import {
  mailer,
  authenticationRoutes,
  sessionRoutes,
  configRoutes,
  accountRoutes,
  vpnEndpoint,
} from './domains/account/index.ts';
import openapiRoutes from './platform/http/openapi-routes.ts';
import { storagePlugin, storageRoutes } from './domains/storage/index.ts';
import { recycleBinPlugin, recycleBinRoutes } from './domains/recycle-bin/index.ts';
import { viewersPlugin, directViewerRoutes } from './domains/viewers/index.ts';
import { bastionPlugin, bastionRoutes } from './domains/bastion/index.ts';
import {
  bookingsPlugin,
  bookingRoutes,
  planningRoutes,
  reservableRoutes,
  adminReservableRoutes,
} from './domains/bookings/index.ts';

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
  const restorePasswordGate = configurePasswordGate({ budgetMs: config.passwordQueueBudgetMs });
  app.addHook('onClose', async () => restorePasswordGate());
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
  // before every plugin that keeps a cache or a connection other nodes' changes must reach
  await app.register(clusterBus);
  // before every plugin that runs background work once across nodes (leases, jobs)
  await app.register(work);
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
  await app.register(vpnEndpoint);
  await app.register(recycleBinPlugin);
  await app.register(templatesPlugin);
  await app.register(deploymentsPlugin);
  await app.register(viewersPlugin);
  await app.register(bastionPlugin);
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
  await app.register(bastionRoutes);
  await app.register(bookingRoutes);
  await app.register(planningRoutes);
  await app.register(reservableRoutes);
  await app.register(roleVisibilityRoutes);
  await app.register(adminUserRoutes);
  await app.register(adminGroupRoutes);
  await app.register(adminCategoryRoutes);
  await app.register(adminLdapProviderRoutes);
  await app.register(adminOidcProviderRoutes);
  await app.register(adminSamlProviderRoutes);
  await app.register(adminHypervisorRoutes);
  await app.register(adminNetworkRoutes);
  await app.register(adminAuditRoutes);
  await app.register(adminNodeRoutes);
  await app.register(adminSettingsRoutes);
  await app.register(adminReservableRoutes);
  // after every route plugin: checks the table against the handlers, the rest answers 501
  await app.register(plannedOperations);
  await app.register(openapiRoutes);
  await app.ready();
}
