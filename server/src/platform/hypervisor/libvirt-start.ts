/**
 * Starting a domain on a libvirt host: the domain XML written to a 0600 file in its run directory
 * and removed once libvirt has read it (`virsh create`: a transient domain), then the consoles'
 * ports read back from the live XML and the runtime written for adoption after a restart.
 */
import { promises as fsp, existsSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from './host-process.ts';
import { writeRuntime } from './libvirt-adopt.ts';
import { buildDomainXml, liveGraphics } from './libvirt-xml.ts';
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
  /** A virsh failure as a HypervisorError (a missing domain is `not_running`). */
  failure(error: unknown, code: HypervisorErrorCode, what: string): HypervisorError;
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
  const xml = buildDomainXml(
    { ...spec, hardware: { ...spec.hardware, isos, floppies } },
    {
      domainName,
      accel: ctx.accel,
      startedAt,
      spiceTls: ctx.spiceTls,
      listen: ctx.consoleAddress,
      ...(diskSource ? { diskSource } : {}),
    },
  );
  const xmlFile = path.join(runDir, 'domain.xml');
  await fsp.writeFile(xmlFile, xml, { mode: 0o600 });
  try {
    await ctx.session.run(['create', xmlFile], ctx.startTimeoutMs);
  } catch (error) {
    if (error instanceof VirshError && /already exists/i.test(error.message))
      throw new HypervisorError('already_running', `domain ${id} already runs on ${ctx.host}`, {
        cause: error,
      });
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
