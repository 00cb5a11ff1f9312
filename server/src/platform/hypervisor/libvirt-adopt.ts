/**
 * Adoption by the libvirt driver after a portal restart: the portal's domains still running on the
 * host (name with the driver's prefix, the portal's metadata) are watched again; the domains the
 * portal recorded as running (`<dataDir>/run/<id>/runtime.json`) that the host no longer runs get
 * their `exit.json`.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { mapDomstate, type LibvirtDomains } from './libvirt-domains.ts';
import { liveGraphics, readMetadata } from './libvirt-xml.ts';
import {
  cleanRunDir,
  publicRuntime,
  readRuntime,
  writeExit,
  type PersistedRuntime,
} from './qemu-run-dir.ts';
import type { VirshSession } from './virsh-session.ts';
import {
  DOMAIN_ID_PATTERN,
  type AdoptResult,
  type ExitInfo,
  type HypervisorError,
} from './types.ts';

/** What adoption needs of the driver. */
export interface LibvirtAdoptContext {
  session: VirshSession;
  domains: LibvirtDomains;
  /** How the host is named in reasons. */
  host: string;
  /** The host's console address, for a domain whose XML names none. */
  consoleAddress: string;
  /** `<dataDir>/run`. */
  runRoot: string;
  /** Whether a start of the domain is under way. */
  isStarting: (id: string) => boolean;
  /** A failure to list the host's domains, as the driver reports it. */
  failure: (error: unknown) => HypervisorError;
}

/** The portal's record of a running domain (no passwords). */
export async function writeRuntime(runtime: PersistedRuntime): Promise<void> {
  await fsp.mkdir(runtime.runDir, { recursive: true, mode: 0o700 });
  await fsp.writeFile(
    path.join(runtime.runDir, 'runtime.json'),
    `${JSON.stringify(runtime, null, 2)}\n`,
    { mode: 0o600 },
  );
}

/** The runtime of a live domain, from its XML and metadata; undefined when it is not the portal's. */
async function liveRuntime(
  ctx: LibvirtAdoptContext,
  id: string,
  name: string,
): Promise<{ runtime: PersistedRuntime; running: boolean } | undefined> {
  const xml = await ctx.session.run(['dumpxml', name]);
  const meta = readMetadata(xml);
  if (meta?.id !== id) return undefined;
  const graphics = liveGraphics(xml);
  const state = mapDomstate(await ctx.session.run(['domstate', name], 5000));
  const runtime: PersistedRuntime = {
    id,
    name: meta.name,
    pid: 0,
    vncPort: graphics.vncPort,
    spicePort: graphics.spicePort,
    spiceTls: graphics.spiceTls,
    consoleHost: graphics.listen ?? ctx.consoleAddress,
    qmpPath: '',
    runDir: path.join(ctx.runRoot, id),
    startedAt: meta.startedAt,
    accel: meta.accel,
    diskPath: meta.diskPath,
    args: [],
  };
  return { runtime, running: state !== 'paused' };
}

/** Adopts the host's running domains and reports the recorded ones that ended; see the module comment. */
export async function adoptDomains(ctx: LibvirtAdoptContext): Promise<AdoptResult> {
  const result: AdoptResult = { adopted: [], dead: [] };
  const { domains } = ctx;
  let names: string[];
  try {
    names = (await ctx.session.run(['list', '--name'])).split('\n').map((l) => l.trim());
  } catch (error) {
    throw ctx.failure(error);
  }
  const live = new Set<string>();
  for (const name of names) {
    if (!name.startsWith(domains.prefix)) continue;
    const id = name.slice(domains.prefix.length);
    if (!DOMAIN_ID_PATTERN.test(id) || ctx.isStarting(id)) continue;
    live.add(id);
    const existing = domains.get(id);
    if (existing && !existing.done) {
      result.adopted.push(publicRuntime(existing.runtime));
      continue;
    }
    try {
      const found = await liveRuntime(ctx, id, name);
      if (!found) continue;
      await writeRuntime(found.runtime);
      domains.attach(found.runtime, found.running ? 'running' : 'paused');
      result.adopted.push(publicRuntime(found.runtime));
    } catch {
      /* it ended meanwhile: the run directories below tell */
      live.delete(id);
    }
  }
  let entries: string[] = [];
  try {
    entries = await fsp.readdir(ctx.runRoot);
  } catch {
    return result;
  }
  for (const id of entries) {
    if (!DOMAIN_ID_PATTERN.test(id) || live.has(id) || ctx.isStarting(id)) continue;
    if (domains.get(id)?.done === false) continue;
    const runDir = path.join(ctx.runRoot, id);
    if (!(await readRuntime(runDir))) continue;
    const info: ExitInfo = {
      code: null,
      signal: null,
      reason: `the domain ${domains.domainName(id)} no longer runs on ${ctx.host}`,
      expected: false,
      at: new Date().toISOString(),
    };
    await writeExit(runDir, info);
    await cleanRunDir(runDir, true);
    result.dead.push({ id, info });
  }
  return result;
}
