/**
 * The disks of a libvirt host as volumes of one `dir` storage pool of that host (default `vdi`),
 * so the portal and the host share no filesystem: every operation is a libvirt call, and a disk's
 * bytes travel through libvirt's streams (`vol-upload`, `vol-download`) over the host's connection.
 *
 * - The pool is made when missing (`pool-define-as … dir`, `pool-build`, `pool-start`,
 *   `pool-autostart`) in `/var/lib/libvirt/images/<pool>` for a `/system` URI, in the XDG data
 *   directory of the URI's user (`~/.local/share/libvirt/images/<pool>`) for a `/session` one.
 * - Commands run through the host's {@link VirshSession}; a stream runs in a `virsh` process of its
 *   own (its own connection), so a long copy never holds up the host's other commands.
 * - A volume that arrives by a stream is made first (`vol-create-as`, raw, the image's length), then
 *   filled; one that fails half way is deleted. Two copies of one volume at once share one stream.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import nodePath from 'node:path';
import { PassThrough, Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errorMessage } from './host-process.ts';
import { hostLabel } from './libvirt-domains.ts';
import { VirshError, virshEnv, type VirshSession } from './virsh-session.ts';
import { HypervisorError, type DiskInfo } from './types.ts';

export interface LibvirtPoolOptions {
  session: VirshSession;
  uri: string;
  /** Default `virsh`. */
  virsh?: string;
  /** The pool's name. Default `vdi`. */
  name?: string;
  /** The pool's directory on the host when it has to be made. Default: see the module comment. */
  path?: string;
  /** The portal's name for the volumes: a disk path in this directory is the volume of its name. */
  portalDir?: string;
}

/** Volume names are plain file names. */
const VOLUME_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,200}$/;
const NOT_FOUND = /(no storage vol|Storage volume not found|no storage pool|pool not found)/i;

function assertVolume(name: string): void {
  if (!VOLUME_NAME.test(name))
    throw new HypervisorError('invalid_spec', `invalid volume name ${JSON.stringify(name)}`);
}

/** Where a pool named `name` goes on the host of `uri` when it has to be made. */
export function defaultPoolPath(uri: string, name: string): string {
  const url = new URL(uri.replace(/^qemu(\+\w+)?:/, 'http:'));
  if (url.pathname !== '/session') return `/var/lib/libvirt/images/${name}`;
  const user = decodeURIComponent(url.username);
  const home = user ? (user === 'root' ? '/root' : `/home/${user}`) : os.homedir();
  return `${home}/.local/share/libvirt/images/${name}`;
}

/** A number element of a volume's XML (`<capacity unit='bytes'>…`). */
const xmlNumber = (xml: string, tag: string) =>
  Number(new RegExp(`<${tag}[^>]*>(\\d+)</${tag}>`).exec(xml)?.[1] ?? 0);

export class LibvirtPool {
  readonly name: string;
  private readonly session: VirshSession;
  private readonly uri: string;
  private readonly virsh: string;
  private readonly wantedPath: string;
  private readonly portalDir: string | undefined;
  private dir: Promise<string> | undefined;
  private readonly arriving = new Map<string, Promise<void>>();

  constructor(options: LibvirtPoolOptions) {
    this.session = options.session;
    this.uri = options.uri;
    this.virsh = options.virsh ?? 'virsh';
    this.name = options.name ?? 'vdi';
    this.wantedPath = options.path ?? defaultPoolPath(options.uri, this.name);
    this.portalDir = options.portalDir ? nodePath.resolve(options.portalDir) : undefined;
  }

  /** The volume a disk path names (in `portalDir`), or undefined. */
  volumeOf(file: string): string | undefined {
    const abs = nodePath.resolve(file);
    if (!this.portalDir || nodePath.dirname(abs) !== this.portalDir) return undefined;
    return nodePath.basename(abs);
  }

  /** The host's path of a disk path that names a volume (which must exist), or undefined. */
  async hostPathOf(file: string): Promise<string | undefined> {
    const volume = this.volumeOf(file);
    if (volume === undefined) return undefined;
    if (!(await this.exists(volume)))
      throw new HypervisorError(
        'invalid_spec',
        `volume ${volume} not found on ${hostLabel(this.uri)}`,
      );
    return this.pathOf(volume);
  }

  private fail(error: unknown, what: string): HypervisorError {
    if (error instanceof HypervisorError) return error;
    const code = error instanceof VirshError && NOT_FOUND.test(error.message);
    return new HypervisorError(
      code ? 'disk_not_found' : 'command_failed',
      `${what} on ${hostLabel(this.uri)}: ${errorMessage(error)}`,
      { cause: error },
    );
  }

  private async run(args: string[], what: string, timeoutMs?: number): Promise<string> {
    try {
      return await this.session.run(args, timeoutMs);
    } catch (error) {
      throw this.fail(error, what);
    }
  }

  /** The pool's directory on the host, the pool made and started first when needed. */
  ensure(): Promise<string> {
    this.dir ??= this.makePool().catch((error: unknown) => {
      this.dir = undefined;
      throw error;
    });
    return this.dir;
  }

  private async makePool(): Promise<string> {
    const what = `storage pool ${this.name}`;
    let info = await this.session.run(['pool-info', this.name]).catch((error: unknown) => {
      if (error instanceof VirshError && NOT_FOUND.test(error.message)) return undefined;
      throw this.fail(error, what);
    });
    if (info === undefined) {
      await this.run(['pool-define-as', this.name, 'dir', '--target', this.wantedPath], what);
      await this.run(['pool-build', this.name], what);
      await this.run(['pool-autostart', this.name], what);
      info = 'State: inactive';
    }
    if (!/^State:\s+running/m.test(info)) await this.run(['pool-start', this.name], what);
    const xml = await this.run(['pool-dumpxml', this.name], what);
    const dir = /<target>\s*<path>([^<]+)<\/path>/.exec(xml)?.[1];
    if (!dir) throw new HypervisorError('command_failed', `${what} has no directory`);
    return dir;
  }

  /** The path of a volume on the host. */
  async pathOf(volume: string): Promise<string> {
    assertVolume(volume);
    return `${await this.ensure()}/${volume}`;
  }

  async exists(volume: string): Promise<boolean> {
    assertVolume(volume);
    await this.ensure();
    await this.arriving.get(volume)?.catch(() => undefined);
    return this.info(volume).then(
      () => true,
      (error: unknown) => {
        if (error instanceof HypervisorError && error.code === 'disk_not_found') return false;
        throw error;
      },
    );
  }

  /** Virtual size, bytes taken on the host and backing file of a volume (`vol-dumpxml`). */
  async info(volume: string): Promise<DiskInfo> {
    assertVolume(volume);
    await this.ensure();
    const xml = await this.run(['vol-dumpxml', '--pool', this.name, volume], `volume ${volume}`);
    const backing = /<backingStore>\s*<path>([^<]+)<\/path>/.exec(xml)?.[1];
    return {
      virtualSize: xmlNumber(xml, 'capacity'),
      actualSize: xmlNumber(xml, 'allocation'),
      backingFile: backing ?? null,
    };
  }

  /** The length of a volume's file on the host (what a download sends). */
  async physicalSize(volume: string): Promise<number> {
    assertVolume(volume);
    await this.ensure();
    const xml = await this.run(['vol-dumpxml', '--pool', this.name, volume], `volume ${volume}`);
    return xmlNumber(xml, 'physical');
  }

  /** A qcow2 volume of `bytes` (an overlay on `backing`, a volume of this pool, when given). */
  async create(volume: string, bytes: number, backing?: string): Promise<DiskInfo> {
    assertVolume(volume);
    if (backing) assertVolume(backing);
    await this.ensure();
    const args = ['vol-create-as', this.name, volume, String(bytes), '--format', 'qcow2'];
    if (backing) args.push('--backing-vol', backing, '--backing-vol-format', 'qcow2');
    await this.run(args, `volume ${volume}`, 120_000);
    return this.info(volume);
  }

  /** Grows a volume to `bytes` (`vol-resize`). */
  async resize(volume: string, bytes: number): Promise<DiskInfo> {
    assertVolume(volume);
    await this.ensure();
    await this.run(
      ['vol-resize', '--pool', this.name, volume, String(bytes)],
      `resize of ${volume}`,
    );
    return this.info(volume);
  }

  /** Deletes a volume; a missing one is no error. */
  async remove(volume: string): Promise<void> {
    assertVolume(volume);
    await this.ensure();
    await this.session.run(['vol-delete', '--pool', this.name, volume]).catch((error: unknown) => {
      if (!(error instanceof VirshError && NOT_FOUND.test(error.message)))
        throw this.fail(error, `delete of ${volume}`);
    });
  }

  /**
   * One `virsh` of its own for a stream: `args` after the URI, the stream on `/dev/stdin` or
   * `/dev/stdout`. Those are a pipe through `cat` (virsh opens the path, which a socket, what Node
   * gives a child, refuses), `pipefail` keeping virsh's exit status.
   */
  private streamProcess(args: string[], io: 'upload' | 'download') {
    const script = io === 'upload' ? 'cat | "$0" "$@"' : '"$0" "$@" | cat';
    const argv = ['-o', 'pipefail', '-c', script, this.virsh, '-q', '-c', this.uri, ...args];
    const child = spawn('bash', argv, {
      stdio: io === 'upload' ? ['pipe', 'ignore', 'pipe'] : ['ignore', 'pipe', 'pipe'],
      env: virshEnv(),
      cwd: '/',
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    const done = new Promise<void>((resolve, reject) => {
      child.once('error', (error) => reject(this.fail(error, args[0] ?? 'virsh')));
      child.once('close', (code, signal) => {
        if (code === 0) return resolve();
        const why = stderr.replace(/^error: /gm, '').trim() || `virsh ${signal ?? code}`;
        reject(
          new HypervisorError('command_failed', `${args[0]} on ${hostLabel(this.uri)}: ${why}`),
        );
      });
    });
    return { child, done };
  }

  /**
   * Makes `volume` from a stream of `bytes` bytes (`vol-create-as` raw, then `vol-upload`);
   * `onBytes` hears the bytes sent so far. A second call for a volume on its way waits for the
   * first. The volume is deleted when the stream fails. `ifMissing`: a volume already there is
   * kept (a template's, which another start may have brought meanwhile).
   */
  upload(
    volume: string,
    source: () => Readable,
    bytes: number,
    onBytes?: (sent: number) => void,
    options: { ifMissing?: boolean } = {},
  ): Promise<void> {
    assertVolume(volume);
    const running = this.arriving.get(volume);
    if (running) return running;
    const work = (async () => {
      if (
        options.ifMissing &&
        (await this.info(volume).then(
          () => true,
          () => false,
        ))
      )
        return;
      await this.uploadNow(volume, source, bytes, onBytes);
    })().finally(() => this.arriving.delete(volume));
    this.arriving.set(volume, work);
    return work;
  }

  private async uploadNow(
    volume: string,
    source: () => Readable,
    bytes: number,
    onBytes?: (sent: number) => void,
  ): Promise<void> {
    await this.ensure();
    const what = `upload of ${volume}`;
    await this.run(
      ['vol-create-as', this.name, volume, String(bytes), '--format', 'raw', '--allocation', '0'],
      what,
    );
    try {
      const { child, done } = this.streamProcess(
        ['vol-upload', '--pool', this.name, volume, '/dev/stdin'],
        'upload',
      );
      let sent = 0;
      const count = new Transform({
        transform(chunk: Buffer, _encoding, next) {
          sent += chunk.length;
          onBytes?.(sent);
          next(null, chunk);
        },
      });
      const stdin = child.stdin as Writable;
      // virsh's own account of a failure says more than the broken pipe it leaves.
      const [piped, ended] = await Promise.allSettled([pipeline(source(), count, stdin), done]);
      if (ended.status === 'rejected') throw ended.reason;
      if (piped.status === 'rejected') throw piped.reason;
      if (sent !== bytes)
        throw new HypervisorError('command_failed', `${what}: ${sent} of ${bytes} bytes sent`);
      // The volume was made raw: libvirt reads its format (and backing volume) again.
      await this.run(['pool-refresh', this.name], what).catch(() => undefined);
    } catch (error) {
      await this.remove(volume).catch(() => undefined);
      throw this.fail(error, what);
    }
  }

  /** A volume's bytes as a stream (`vol-download`); the stream errors when the download fails. */
  download(volume: string): Readable {
    assertVolume(volume);
    const out = new PassThrough();
    void this.ensure().then(
      () => {
        const { child, done } = this.streamProcess(
          ['vol-download', '--pool', this.name, volume, '/dev/stdout'],
          'download',
        );
        child.stdout?.pipe(out, { end: false });
        // The bytes end with the process: its status says whether they are all there.
        Promise.all([done, new Promise((r) => child.stdout?.once('end', r))]).then(
          () => out.end(),
          (error: unknown) => out.destroy(error as Error),
        );
      },
      (error: unknown) => out.destroy(error as Error),
    );
    return out;
  }
}
