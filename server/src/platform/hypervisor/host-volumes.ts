/**
 * Disks between the portal and the libvirt hosts' storage pools (`libvirt-pool.ts`).
 *
 * Names: a host's volumes have the portal-side name `<DATA_DIR>/hosts/<host>/disks/<volume>`
 * (`hostDiskDir`): a desktop's disk path there is the volume of that name in the host's pool; the
 * host `local` keeps its disks as files in `<DATA_DIR>/disks`. A template image the portal keeps
 * as a file (and each image of its backing chain) is the volume `tpl-<hash>-<file name>` on every
 * host that has it, the hash that of its path on the portal.
 *
 * Copies: an image that moves into a pool names its backing volume by the volume's name (a name
 * relative to its own directory, where every volume of the pool is), rewritten in the stream
 * (`qcow2-backing.ts`), so a volume keeps working in any pool and the hosts' pool directories may
 * differ. A desktop's disk that never ran (an overlay with no data of its own) is made anew on
 * the host (`vol-create-as --backing-vol`) instead of being sent.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { LibvirtPool } from './libvirt-pool.ts';
import { rewriteBacking } from './qcow2-backing.ts';
import { HypervisorError, type DiskInfo } from './types.ts';

const execFileAsync = promisify(execFile);

/** The host that keeps its disks as files on the portal. */
const LOCAL = 'local';

/** The directory a host keeps its desktops' disks in (for a libvirt host: its volumes' names). */
export function hostDiskDir(dataDir: string, hostId: string): string {
  return hostId === LOCAL
    ? path.join(dataDir, 'disks')
    : path.join(dataDir, 'hosts', hostId, 'disks');
}

/** The host whose volume a disk path names (null: a file of the portal). */
export function volumeHostOf(dataDir: string, file: string): string | null {
  const rel = path.relative(path.join(dataDir, 'hosts'), path.resolve(file)).split(path.sep);
  return rel.length === 3 && rel[1] === 'disks' && rel[0] && !rel[0].startsWith('.')
    ? rel[0]
    : null;
}

/** The volume name of a portal file: `<prefix>-<hash of its path>-<file name>`. */
function portalFileVolume(prefix: string, file: string): string {
  const abs = path.resolve(file);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 10);
  return `${prefix}-${hash}-${path.basename(abs).replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** The volume name of a template image the portal keeps at `file`. */
export function templateVolume(file: string): string {
  return portalFileVolume('tpl', file);
}

/** The volume name of a medium's file (an ISO or a floppy image) the portal keeps at `file`. */
export function mediaVolume(file: string): string {
  return portalFileVolume('media', file);
}

/** Progress of a copy in percent (whole numbers, each once). */
export type OnPercent = (percent: number) => void;

/** Counts the bytes of several streams as one copy, in percent. */
function progress(total: number, onPercent?: OnPercent) {
  let before = 0;
  let last = -1;
  const tell = (done: number) => {
    const percent = total > 0 ? Math.min(100, Math.floor((done * 100) / total)) : 100;
    if (percent !== last) {
      last = percent;
      onPercent?.(percent);
    }
  };
  return {
    part: () => {
      const base = before;
      return (sent: number) => {
        before = base + sent;
        tell(before);
      };
    },
    done: () => tell(total),
  };
}

/** The portal's files of an image's backing chain, nearest first (`info` is `qemu-img info`). */
async function chainOf(info: (file: string) => Promise<DiskInfo>, file: string): Promise<string[]> {
  const chain: string[] = [];
  for (let next = (await info(file)).backingFile; next; next = (await info(next)).backingFile) {
    if (chain.includes(next) || chain.length > 16) break;
    chain.push(next);
  }
  return chain;
}

/** Whether a qcow2 overlay has no data of its own (every cluster still its backing chain's). */
export async function isPristineOverlay(qemuImg: string, file: string): Promise<boolean> {
  const { stdout } = await execFileAsync(qemuImg, ['map', '--output=json', '-U', file], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const extents = JSON.parse(stdout) as { depth: number; data: boolean; zero: boolean }[];
  return extents.every((e) => e.depth > 0 || (!e.data && !e.zero));
}

export interface PortalToPool {
  pool: LibvirtPool;
  /** `qemu-img info` of a portal file. */
  info(file: string): Promise<DiskInfo>;
  qemuImg: string;
  onPercent?: OnPercent | undefined;
}

/**
 * Brings a portal disk file into the pool as `volume`: the images of its backing chain the pool
 * lacks are uploaded first (base first, from the portal's copies), then the disk itself: made on
 * the host as an overlay when it never ran, uploaded otherwise. The portal's file stays.
 */
export async function diskToPool(ctx: PortalToPool, file: string, volume: string): Promise<void> {
  const { pool } = ctx;
  const chain = await chainOf(ctx.info, file);
  const missing: string[] = [];
  for (const image of chain) if (!(await pool.exists(templateVolume(image)))) missing.push(image);
  const top = chain[0];
  const fresh = top !== undefined && (await isPristineOverlay(ctx.qemuImg, file));
  const sends = [...missing.reverse(), ...(fresh ? [] : [file])];
  const sizes = await Promise.all(sends.map(async (f) => (await fsp.stat(f)).size));
  const count = progress(
    sizes.reduce((a, b) => a + b, 0),
    ctx.onPercent,
  );
  for (const [i, image] of sends.entries()) {
    const backing = image === file ? top : chain[chain.indexOf(image) + 1];
    const name = image === file ? volume : templateVolume(image);
    await pool.upload(
      name,
      () =>
        createReadStream(image).pipe(
          rewriteBacking((old) => (backing ? templateVolume(backing) : old)),
        ),
      sizes[i] ?? 0,
      count.part(),
      { ifMissing: image !== file },
    );
  }
  if (fresh) await pool.create(volume, (await ctx.info(file)).virtualSize, templateVolume(top));
  count.done();
}

/**
 * Brings media files (ISOs, floppy images) into the pool, each as its {@link mediaVolume} (raw,
 * uploaded once per pool: a volume already there is kept); `onPercent` hears the progress of the
 * uploads, and nothing when the pool had them all.
 */
export async function mediaToPool(
  pool: LibvirtPool,
  files: readonly string[],
  onPercent?: OnPercent,
): Promise<void> {
  const missing: string[] = [];
  for (const file of new Set(files))
    if (!(await pool.exists(mediaVolume(file)))) missing.push(file);
  if (missing.length === 0) return;
  const sizes = await Promise.all(missing.map(async (f) => (await fsp.stat(f)).size));
  const count = progress(
    sizes.reduce((a, b) => a + b, 0),
    onPercent,
  );
  for (const [i, file] of missing.entries())
    await pool.upload(
      mediaVolume(file),
      () => createReadStream(file),
      sizes[i] ?? 0,
      count.part(),
      {
        ifMissing: true,
      },
    );
  count.done();
}

/**
 * Copies `volume` (and the images of its backing chain the target lacks) from one host's pool to
 * another's, streamed (`vol-download` into `vol-upload`), backing names made relative.
 */
export async function volumeBetweenPools(
  from: LibvirtPool,
  to: LibvirtPool,
  volume: string,
  onPercent?: OnPercent,
): Promise<void> {
  const sends: { name: string; bytes: number; backing: string | null }[] = [];
  for (let name: string | null = volume; name;) {
    if (name !== volume && (await to.exists(name))) break;
    const info = await from.info(name);
    const backing = info.backingFile ? path.basename(info.backingFile) : null;
    sends.unshift({ name, bytes: await from.physicalSize(name), backing });
    name = backing;
  }
  const count = progress(
    sends.reduce((a, s) => a + s.bytes, 0),
    onPercent,
  );
  for (const send of sends) {
    const source = (): Readable =>
      from.download(send.name).pipe(rewriteBacking((old) => send.backing ?? old));
    await to.upload(send.name, source, send.bytes, count.part(), {
      ifMissing: send.name !== volume,
    });
  }
  count.done();
}

/**
 * Copies a pool's volume to a portal file (`target`, written under a temporary name, then
 * renamed), its backing name made the portal's template file `backingFile`.
 */
export async function volumeToFile(
  from: LibvirtPool,
  volume: string,
  target: string,
  backingFile: string | null,
  onPercent?: OnPercent,
): Promise<void> {
  const bytes = await from.physicalSize(volume);
  const count = progress(bytes, onPercent);
  const sent = count.part();
  let done = 0;
  const partial = `${target}.part`;
  await fsp.mkdir(path.dirname(target), { recursive: true });
  try {
    const out = (await fsp.open(partial, 'w')).createWriteStream();
    const stream = from
      .download(volume)
      .pipe(rewriteBacking((old) => backingFile ?? old))
      .on('data', (chunk: Buffer) => sent((done += chunk.length)));
    await new Promise<void>((resolve, reject) => {
      stream.once('error', reject);
      out.once('error', reject);
      out.once('finish', resolve);
      stream.pipe(out);
    });
    await fsp.rename(partial, target);
  } catch (error) {
    await fsp.rm(partial, { force: true });
    throw error;
  }
  count.done();
}

/**
 * Downloads `volume` and its backing chain from a pool as portal files next to `target`
 * (`<target>.chain-<n>`, the volume first), each naming the next as its backing file, and answers
 * them. The chain stops at the first backing volume that is a file of `knownDir` (a template the
 * portal keeps there, by its {@link templateVolume} name): that file is the backing, not
 * downloaded. `onPercent` hears the downloads' progress by bytes; `signal` stops between images.
 */
export async function volumeChainToFiles(
  from: LibvirtPool,
  volume: string,
  target: string,
  knownDir: string,
  onPercent?: OnPercent,
  signal?: AbortSignal,
): Promise<string[]> {
  const known = new Map<string, string>();
  for (const name of await fsp.readdir(knownDir).catch(() => [] as string[])) {
    const file = path.join(knownDir, name);
    known.set(templateVolume(file), file);
  }
  const chain: string[] = [];
  let base: string | null = null;
  for (let name: string | null = volume; name && chain.length <= 16;) {
    chain.push(name);
    const backing: string | null = (await from.info(name)).backingFile;
    name = backing ? path.basename(backing) : null;
    base = name ? (known.get(name) ?? null) : null;
    if (base) break;
  }
  const sizes = await Promise.all(chain.map((name) => from.physicalSize(name)));
  const count = progress(
    sizes.reduce((a, b) => a + b, 0),
    onPercent,
  );
  const files = chain.map((_, i) => `${target}.chain-${i}`);
  try {
    // base first, so every image's backing file is there once it is
    for (let i = chain.length - 1; i >= 0; i--) {
      if (signal?.aborted) throw new HypervisorError('command_failed', 'the copy was aborted');
      const part = count.part();
      const bytes = sizes[i] ?? 0;
      await volumeToFile(from, chain[i] ?? '', files[i] ?? '', files[i + 1] ?? base, (p) =>
        part(Math.floor((p * bytes) / 100)),
      );
    }
  } catch (error) {
    await Promise.all(files.map((file) => fsp.rm(file, { force: true })));
    throw error;
  }
  count.done();
  return files;
}
