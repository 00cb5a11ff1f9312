/**
 * Starting a domain on a libvirt host: the domain XML written to a 0600 file in its run directory
 * and removed once libvirt has read it (`virsh create`: a transient domain), then the consoles'
 * ports read back from the live XML and the runtime written for adoption after a restart.
 */
import { promises as fsp, existsSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from './host-process.ts';
import { writeRuntime } from './libvirt-adopt.ts';
import { isQcow2 } from './qcow2-info.ts';
import { buildDomainXml, hostInterfaces, liveGraphics, type LibvirtNic } from './libvirt-xml.ts';
import { cleanRunDir, type PersistedRuntime } from './qemu-run-dir.ts';
import { VirshError, type VirshSession } from './virsh-session.ts';
import { HypervisorError, type Accel, type DomainSpec, type HypervisorErrorCode } from './types.ts';

/** What a start needs of the driver. */
export interface CreateContext {
  session: VirshSession;
  /** the host's label, in messages */
  host: string;
  accel: Accel;
  spiceTls: boolean;
  /** The address the consoles listen on (the host's console address). */
  consoleAddress: string;
  startTimeoutMs: number;
  /** the libvirt name of the domain */
  domainName: string;
  /** `<dataDir>/run/<id>` */
  runDir: string;
  /**
   * The host's path of the main disk or a medium when it is a volume of the host's storage pool
   * (the file checks are then the pool's business); undefined: a file the host reaches at the
   * spec's path.
   */
  volumePath(diskPath: string): Promise<string | undefined>;
  /** The domain's network cards as the host gives them (on its bridges, or user-mode). */
  nics: LibvirtNic[];
  /**
   * Hears that the host refused a bridge (a session daemon whose `qemu-bridge-helper` is not
   * setuid or not allowed the bridge in `/etc/qemu/bridge.conf`); the start is then made again
   * with user-mode cards.
   */
  onBridgeRefused(reason: string): void;
  /** A virsh failure as a HypervisorError (a missing domain is `not_running`). */
  failure(error: unknown, code: HypervisorErrorCode, what: string): HypervisorError;
}

/**
 * The cards of one host's starts: a card of a network whose bridge (`bridges`, by network id) the
 * host has (`virsh iface-list --all`) is plugged into it, any other is user-mode; all are, without
 * `bridges` or once the host refused a bridge (said once to `log`).
 */
export class HostNics {
  private refused = false;

  constructor(
    private readonly session: Pick<VirshSession, 'run'>,
    private readonly host: string,
    private readonly bridges?: () => Promise<ReadonlyMap<string, string>>,
    private readonly log?: (line: string) => void,
  ) {}

  async of(spec: DomainSpec): Promise<LibvirtNic[]> {
    const cards = spec.network ?? [];
    if (cards.length === 0 || !this.bridges || this.refused)
      return cards.map(({ mac }) => ({ mac }));
    const [byNetwork, listed] = await Promise.all([
      this.bridges(),
      this.session.run(['iface-list', '--all']).catch(() => ''),
    ]);
    const present = new Set(hostInterfaces(listed));
    return cards.map(({ mac, network }) => {
      const bridge = byNetwork.get(network);
      return bridge && present.has(bridge) ? { mac, bridge } : { mac };
    });
  }

  /** The host refused a bridge: its cards are user-mode from now on. */
  refuse(reason: string): void {
    if (!this.refused)
      this.log?.(`${this.host} refused a bridge, its cards are user-mode: ${reason}`);
    this.refused = true;
  }
}

/** Creates the domain of a valid spec and answers its runtime (written to its run directory). */
export async function createDomain(
  ctx: CreateContext,
  spec: DomainSpec,
): Promise<PersistedRuntime> {
  const id = spec.id;
  const { runDir, domainName } = ctx;
  const diskSource = spec.diskPath ? await ctx.volumePath(spec.diskPath) : undefined;
  // A medium that names a volume of the host's pool is opened there; any other file at its path.
  const hostPaths = async (files: string[]) =>
    Promise.all(files.map(async (file) => (await ctx.volumePath(file)) ?? file));
  const isos = await hostPaths(spec.hardware.isos);
  const floppies = await hostPaths(spec.hardware.floppies);
  const files = [
    ...(diskSource ? [] : [spec.diskPath]),
    ...spec.hardware.isos.filter((file, i) => isos[i] === file),
    ...spec.hardware.floppies.filter((file, i) => floppies[i] === file),
  ];
  for (const file of files) {
    if (file && !existsSync(file))
      throw new HypervisorError('invalid_spec', `file not found: ${file}`);
  }
  await fsp.mkdir(runDir, { recursive: true, mode: 0o700 });
  await cleanRunDir(runDir, false);
  const startedAt = new Date().toISOString();
  const xmlFile = path.join(runDir, 'domain.xml');
  const create = async (nics: LibvirtNic[]) => {
    const xml = buildDomainXml(
      { ...spec, hardware: { ...spec.hardware, isos, floppies } },
      {
        domainName,
        accel: ctx.accel,
        startedAt,
        spiceTls: ctx.spiceTls,
        listen: ctx.consoleAddress,
        nics,
        ...(diskSource ? { diskSource } : {}),
      },
    );
    await fsp.writeFile(xmlFile, xml, { mode: 0o600 });
    await ctx.session.run(['create', xmlFile], ctx.startTimeoutMs);
  };
  try {
    await create(ctx.nics).catch(async (error: unknown) => {
      if (!(error instanceof VirshError && /bridge helper/i.test(error.message))) throw error;
      if (!ctx.nics.some((nic) => nic.bridge)) throw error;
      ctx.onBridgeRefused(error.message);
      await create(ctx.nics.map(({ mac }) => ({ mac })));
    });
  } catch (error) {
    if (error instanceof VirshError && /already exists/i.test(error.message))
      throw new HypervisorError('already_running', `domain ${id} already runs on ${ctx.host}`, {
        cause: error,
      });
    // libvirt names QEMU's reason when it reads QEMU's log in time; when QEMU exits before
    // libvirt reaches its monitor, it says only that the monitor refused. A main disk the host
    // reaches at the spec's path and that is no qcow2 image is then named here.
    const disk = diskSource ? undefined : spec.diskPath;
    if (disk && !(await isQcow2(disk)))
      throw new HypervisorError(
        'start_failed',
        `start of ${id} on ${ctx.host} failed: the disk ${disk} is not in qcow2 format (${errorMessage(error)})`,
        { cause: error },
      );
    throw ctx.failure(error, 'start_failed', `start of ${id} on ${ctx.host} failed`);
  } finally {
    await fsp.rm(xmlFile, { force: true });
  }
  let graphics;
  try {
    graphics = liveGraphics(await ctx.session.run(['dumpxml', domainName]));
  } catch (error) {
    await ctx.session.run(['destroy', domainName]).catch(() => undefined);
    throw new HypervisorError('start_failed', `start of ${id}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const runtime: PersistedRuntime = {
    id,
    name: spec.name,
    pid: 0,
    vncPort: graphics.vncPort,
    spicePort: graphics.spicePort,
    spiceTls: graphics.spiceTls,
    consoleHost: ctx.consoleAddress,
    qmpPath: '',
    runDir,
    startedAt,
    accel: ctx.accel,
    diskPath: spec.diskPath ? path.resolve(spec.diskPath) : '',
    args: [],
  };
  await writeRuntime(runtime);
  return runtime;
}
