/**
 * Wires the hypervisors into the app: the hypervisor hosts (hypervisor-hosts.ts: the local QEMU
 * driver of the host `local` and a libvirt driver per other host, behind one registry, with
 * placement and the health probe; HYPERVISOR_URI seeds a host), the idle manager that pauses
 * guests nobody looks at, the desktop engine with its reconciler, and the console access paths
 * (consoles.ts: tickets, the VNC websocket proxy, the SPICE CONNECT tunnel). Decorates
 * `app.engine`, `app.hypervisor` (the registry), `app.viewers`, the desktop service and the
 * allowed service.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import type { DesktopRow } from '../../platform/db/schema.ts';
import { createHypervisorDriver } from '../../platform/hypervisor/driver-factory.ts';
import { HostNetworks } from '../../platform/hypervisor/host-networks.ts';
import { createIdleManager, type IdleManager } from '../../platform/hypervisor/idle.ts';
import { LOCAL_HOST, type HostDrivers } from '../../platform/hypervisor/host-drivers.ts';
import { prepareDemoImages } from '../../platform/hypervisor/demo-images.ts';
import type { DesktopState } from '../../../../src/generated/types.ts';
import { desktopState, desktopStates } from '../../../../src/generated/policy.ts';
import { DesktopEngine } from './desktop-engine.ts';
import { createDesktopService, type DesktopService } from './desktop-service.ts';
import { VIEWER_STATES } from './desktop-viewing.ts';
import { createAllowedService, type AllowedService } from './allowed-service.ts';
import type {
  DesktopRuntime,
  DesktopStore,
  EngineDesktop,
  EnginePatch,
  StartPasswords,
} from './types.ts';
import { createConsoles, type Consoles } from './consoles.ts';
import { createHypervisorHosts, type HypervisorHosts } from './hypervisor-hosts.ts';
import { seedHosts } from './hypervisors.ts';
import { nicsOf } from './domain-spec.ts';
import { readNetworkDefs, seedNetworks } from './networks.ts';
import { settleReturnedHost } from './host-return.ts';

declare module 'fastify' {
  interface FastifyInstance {
    engine: DesktopEngine;
    /** The host side of the desktops' networks (bridge, TAPs, dnsmasq, NAT). */
    hostNetworks: HostNetworks;
    hypervisor: HostDrivers;
    hypervisorHosts: HypervisorHosts;
    idle: IdleManager;
    viewers: Consoles;
    desktopService: DesktopService;
    allowedService: AllowedService;
  }
}

/** States in which console connections may stay open: those with a screen. */
const CONSOLE_STATES: readonly string[] = VIEWER_STATES;
/** States whose consoles stay: those with a screen, and `starting` (a VNC console waits for it). */
const KEEPS_CONSOLES: readonly string[] = [...CONSOLE_STATES, desktopState.starting];

/** The node that runs the desktop's VM or is starting it, as its runtime records it. */
function nodeOf(row: DesktopRow): string | null {
  const node = (row.runtime as { node?: unknown }).node;
  return typeof node === 'string' ? node : null;
}

/** The hypervisor host that runs the desktop's VM or is starting it, as its runtime records it. */
function hostOf(row: DesktopRow | undefined): string | null {
  const host = (row?.runtime as { host?: unknown } | undefined)?.host;
  return typeof host === 'string' ? host : null;
}

/** The passwords a start chose when it was accepted, while the desktop is `starting`. */
function passwordsOf(row: DesktopRow): StartPasswords | null {
  const { vncPassword, spicePassword } = row.runtime;
  return row.state === 'starting' && vncPassword && spicePassword
    ? { vnc: vncPassword, spice: spicePassword }
    : null;
}

function runtimeOf(row: DesktopRow): DesktopRuntime | null {
  const rt = row.runtime as Partial<DesktopRuntime>;
  return typeof rt.pid === 'number' && typeof rt.vncPort === 'number'
    ? (rt as DesktopRuntime)
    : null;
}

const plugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  const network = new HostNetworks({
    ...config.network,
    log: (line) => app.log.info(line),
    definitions: () => readNetworkDefs(app.db),
  });
  const hosts = createHypervisorHosts({
    db: app.db,
    dataDir: config.dataDir,
    accel: config.qemuAccel,
    local: createHypervisorDriver({ dataDir: config.dataDir, accel: config.qemuAccel, network }),
    diskOwner: config.hypervisorDiskOwner,
    memoryOvercommitPercent: config.memoryOvercommitPercent,
    bridges: async () => new Map((await readNetworkDefs(app.db)).map((d) => [d.id, d.bridge])),
    hostOf: async (id) => hostOf(await app.desktops.byId(id)),
    probes: () => app.work.isLeader,
    // The runtime stays: the host may still run the domain, adopted when it answers again.
    failDesktopsOn: async (host, detail) => {
      for (const row of await app.desktops.inStates(desktopStates.maybeRunning))
        if ((hostOf(row) ?? LOCAL_HOST) === host)
          await store.update(row.id, { state: 'failed', detail, queue: null }, [
            row.state as DesktopState,
          ]);
    },
    hostReturned: (host, hostDriver) =>
      settleReturnedHost(
        { store, idle, warn: (obj, msg) => app.log.warn(obj, msg) },
        host,
        hostDriver,
      ),
    warn: (obj, msg) => app.log.warn(obj, msg),
  });
  const driver = hosts.drivers;
  const idle = createIdleManager(driver, {
    graceMs: config.idleGraceMs,
    keepRunning: (id) => network.keepsRunning(id),
  });
  idle.on('warning', (id, err) => app.log.debug({ id, err }, 'idle manager warning'));
  const viewers = createConsoles(app, { driver, idle, consoleStates: CONSOLE_STATES });

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
    passwords: passwordsOf(row),
    node: nodeOf(row),
    host: hostOf(row),
    forced_hyp: row.forcedHyp ?? null,
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
      // A runtime names the node whose VM it is; a start names the node that starts it.
      if (patch.runtime) values.runtime = { ...patch.runtime, node: config.nodeName };
      else if (patch.runtime === null) values.runtime = {};
      else if (patch.state === 'starting')
        values.runtime = {
          node: config.nodeName,
          ...(patch.host ? { host: patch.host } : {}),
          ...(patch.passwords
            ? { vncPassword: patch.passwords.vnc, spicePassword: patch.passwords.spice }
            : {}),
        };
      if (patch.disk_path !== undefined) values.diskPath = patch.disk_path;
      if (patch.queue !== undefined) values.queue = patch.queue;
      if (patch.accessed) values.accessed = new Date();
      const wire = await app.desktops.update(id, values, from);
      if (!wire) return undefined;
      if (patch.state && !KEEPS_CONSOLES.includes(patch.state)) viewers.closeDesktop(id);
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

  // A guest's addresses (from the DHCP leases) go into its runtime (`ip`: its first card's), and
  // out with the desktop event.
  const setAddress = async (
    id: string,
    ip: string | null,
    addresses: Record<string, string>,
    tries = 10,
  ): Promise<void> => {
    const desktop = await store.get(id);
    if (desktop?.state === 'starting' && tries > 0) {
      setTimeout(() => void setAddress(id, ip, addresses, tries - 1), 1000).unref();
      return;
    }
    const runtime = desktop?.runtime;
    if (!runtime) return;
    const known = Object.keys(addresses).length > 0;
    if (
      (runtime.ip ?? null) === ip &&
      JSON.stringify(runtime.addresses ?? {}) === JSON.stringify(addresses)
    )
      return;
    const { ip: _ip, addresses: _addresses, ...rest } = runtime;
    const next = { ...rest, ...(ip ? { ip } : {}), ...(known ? { addresses } : {}) };
    await store.update(id, { runtime: next }, ['started']);
  };
  network.on('address', (id, ip, addresses) => {
    setAddress(id, ip, addresses).catch((err: unknown) =>
      app.log.warn({ err, id }, 'desktop address'),
    );
  });

  const engine = new DesktopEngine({
    store,
    driver,
    idle,
    dataDir: config.dataDir,
    log: app.log,
    shutdownTimeoutMs: config.shutdownGraceMs,
    reconcileMs: config.reconcileMs,
    exclusive: async (name, fn) => (await app.work.exclusive(name, fn)).ran,
    // Each node settles its own VMs; the leader also those of no node or of a node gone.
    reconciles: async () => {
      const me = config.nodeName;
      if (!app.work.isLeader) return (d) => d.node === me;
      const live = await app.work.liveNodes();
      return (d) => d.node === me || d.node === null || !live.has(d.node);
    },
    place: (desktop) => hosts.place(desktop),
    vncReady: (id, vncPort) => viewers.vncReady(id, vncPort),
  });

  app.decorate('engine', engine);
  app.decorate('hypervisor', driver);
  app.decorate('hostNetworks', network);
  // A network an admin changed through another node: this host's bridges follow (that node
  // brought its own host in step before it answered).
  app.cluster.on('network.changed', async ({ node, before, after }) => {
    if (node === app.cluster.nodeName) return;
    if (after) await network.define(after, before ?? undefined);
    else if (before) await network.remove(before);
  });
  app.decorate('hypervisorHosts', hosts);
  app.decorate('idle', idle);
  app.decorate('viewers', viewers);
  app.decorate('desktopService', createDesktopService(app));
  app.decorate('allowedService', createAllowedService(app));

  app.addHook('onReady', async () => {
    if (config.prepareImages) {
      await prepareDemoImages({ dataDir: config.dataDir }).catch((err: unknown) =>
        app.log.warn({ err }, 'demo images unavailable'),
      );
    }
    await seedHosts(app.db, config.hypervisorUri);
    await seedNetworks(app.db, config.network.prefix, config.network.natSubnet);
    await hosts.refresh();
    await engine.init();
    hosts.start();
    // Guests that kept running across a restart: their addresses are followed again.
    for (const row of await app.desktops.inStates(['started']))
      await network.track(row.id, nicsOf(row.id, row.hardware.interfaces));
  });
  app.addHook('onClose', async () => {
    hosts.close();
    await engine.close();
    idle.close();
    network.close();
    await driver.close();
  });
};

export default globalPlugin(plugin, 'desktops');
