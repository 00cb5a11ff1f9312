/**
 * Wires the hypervisor into the app: the QEMU driver (or none), the idle manager that pauses guests
 * nobody looks at, the desktop engine with its reconciler, console tickets, the VNC websocket proxy
 * and the HTTP CONNECT tunnel used by SPICE clients. Decorates `app.engine` and `app.viewers`.
 */
import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { canManageDesktop } from '../lib/ownership.ts';
import type { DesktopRow } from '../db/schema.ts';
import { createQemuDriver } from '../hypervisor/qemu-driver.ts';
import { createIdleManager, type IdleManager } from '../hypervisor/idle.ts';
import type { Hypervisor } from '../hypervisor/types.ts';
import { prepareDemoImages } from '../hypervisor/demo-images.ts';
import type { DesktopState } from '../../../src/generated/types.ts';
import { DesktopEngine } from './desktop-engine.ts';
import { createDesktopService, VIEWER_STATES, type DesktopService } from './desktop-service.ts';
import { createRecycleBinService, type RecycleBinService } from './recycle-bin-service.ts';
import type { DesktopRuntime, DesktopStore, EngineDesktop, EnginePatch } from './types.ts';
import { TicketStore } from '../viewers/tickets.ts';
import { VncProxy, VNC_WS_PATH } from '../viewers/vnc-proxy.ts';

declare module 'fastify' {
  interface FastifyInstance {
    engine: DesktopEngine;
    hypervisor: Hypervisor;
    idle: IdleManager;
    viewers: { tickets: TicketStore; vnc: VncProxy };
    desktopService: DesktopService;
    recycleBinService: RecycleBinService;
  }
}

/** States in which console connections may stay open: those with a screen. */
const CONSOLE_STATES: readonly string[] = VIEWER_STATES;

function runtimeOf(row: DesktopRow): DesktopRuntime | null {
  const rt = row.runtime as Partial<DesktopRuntime>;
  return typeof rt.pid === 'number' && typeof rt.vncPort === 'number'
    ? (rt as DesktopRuntime)
    : null;
}

const plugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  const driver = createQemuDriver({ dataDir: config.dataDir, accel: config.qemuAccel });
  const idle = createIdleManager(driver, { graceMs: config.idleGraceMs });
  idle.on('warning', (id, err) => app.log.debug({ id, err }, 'idle manager warning'));

  const templateDisk = async (templateId: string | null): Promise<string | null> =>
    templateId ? ((await app.templates.get(templateId))?.diskPath ?? null) : null;
  const toEngine = async (row: DesktopRow): Promise<EngineDesktop> => ({
    id: row.id,
    user_id: row.userId,
    name: row.name,
    type: row.type,
    state: row.state as DesktopState,
    detail: row.detail,
    hardware: row.hardware,
    disk_path: row.diskPath ?? null,
    template_disk_path: await templateDisk(row.templateId),
    runtime: runtimeOf(row),
    updated_at: row.updatedAt,
  });

  const store: DesktopStore = {
    async get(id) {
      const row = await app.desktops.byId(id);
      return row ? toEngine(row) : undefined;
    },
    async update(id, patch: EnginePatch, from) {
      const values: Parameters<typeof app.desktops.update>[1] = {};
      if (patch.state !== undefined) values.state = patch.state;
      if (patch.detail !== undefined) values.detail = patch.detail;
      if (patch.runtime !== undefined) values.runtime = patch.runtime ?? {};
      if (patch.disk_path !== undefined) values.diskPath = patch.disk_path;
      if (patch.queue !== undefined) values.queue = patch.queue;
      if (patch.accessed) values.accessed = new Date();
      const wire = await app.desktops.update(id, values, from);
      if (!wire) return undefined;
      if (patch.state && !CONSOLE_STATES.includes(patch.state)) vnc.closeDesktop(id);
      const row = await app.desktops.byId(id);
      return row ? toEngine(row) : undefined;
    },
    async listInStates(states) {
      return Promise.all((await app.desktops.inStates(states)).map(toEngine));
    },
    async mediaPaths(ids) {
      const rows = await app.media.byIds(ids);
      return new Map(rows.flatMap((r) => (r.path ? [[r.id, r.path] as const] : [])));
    },
  };

  const engine = new DesktopEngine({
    store,
    driver,
    idle,
    dataDir: config.dataDir,
    log: app.log,
    shutdownTimeoutMs: config.shutdownGraceMs,
  });

  const tickets = new TicketStore();
  const vnc = new VncProxy({
    tickets,
    allowedOrigins: config.allowedOrigins,
    log: app.log,
    viewerAttached: (id) => idle.viewerAttached(id),
    viewerDetached: (id) => idle.viewerDetached(id),
    async target(desktopId, userId) {
      const row = await app.desktops.byId(desktopId);
      const user = await app.users.byId(userId);
      const rt = row ? runtimeOf(row) : null;
      const ownerOk = Boolean(
        row &&
        user &&
        user.active &&
        canManageDesktop({ userId: user.id, role: user.role, categoryId: user.categoryId }, row),
      );
      return {
        ownerOk,
        running: Boolean(row && CONSOLE_STATES.includes(row.state)),
        port: rt?.vncPort ?? null,
      };
    },
  });
  app.upgrades.register(VNC_WS_PATH, vnc.handleUpgrade);

  // SPICE clients reach the loopback-only SPICE listener through an HTTP CONNECT tunnel on our
  // port, and only to the SPICE port of a desktop that is running (the SPICE ticket authenticates).
  app.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const [host, portText] = (req.url ?? '').split(':');
      const port = Number(portText);
      const allowed =
        (host === '127.0.0.1' || host === 'localhost') &&
        Number.isInteger(port) &&
        (await app.desktops.inStates(CONSOLE_STATES)).some((r) => r.runtime.spicePort === port);
      if (!allowed) {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const upstream = connect({ host: '127.0.0.1', port }, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    })().catch(() => socket.destroy());
  });

  app.decorate('engine', engine);
  app.decorate('hypervisor', driver);
  app.decorate('idle', idle);
  app.decorate('viewers', { tickets, vnc });
  app.decorate('desktopService', createDesktopService(app));
  app.decorate('recycleBinService', createRecycleBinService(app));

  app.addHook('onReady', async () => {
    if (config.prepareImages) {
      await prepareDemoImages({ dataDir: config.dataDir }).catch((err: unknown) =>
        app.log.warn({ err }, 'demo images unavailable'),
      );
    }
    await engine.init();
  });
  app.addHook('onClose', async () => {
    await engine.close();
    idle.close();
    await driver.close();
  });
};

export default globalPlugin(plugin, 'engine');
