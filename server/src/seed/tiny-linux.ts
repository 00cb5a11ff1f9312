/**
 * The Tiny Linux guest: a real Linux for demos and network tests, built from Debian packages
 * already on the host (no download): the cloud kernel (`linux-image-cloud-amd64`), an initramfs
 * with `busybox-static` (init, getty/login, udhcpc, httpd, acpid), `dropbear-bin` (SSH) and
 * `openssl` (HTTPS: `s_server`) with the libraries they link, on a FAT disk that `syslinux` boots (`mtools`/`dosfstools` write it without
 * root or loop devices). The guest files are described in `tiny-linux-files.ts`.
 *
 * The disk is a template disk like the idle guest's (desktops get qcow2 overlays on it), so it
 * needs no kernel/initrd options in the QEMU command. SSH keys travel on the kernel command line in
 * the disk's `syslinux.cfg` (`tiny.keys=`): no extra drive to attach per start, and a template
 * with other keys is another build (the key file is part of the cache key).
 *
 * Built once per machine and inputs: the hash of every input (kernel, busybox, dropbear, openssl,
 * the guest's files, the keys) names the built disk in TINY_LINUX_CACHE_DIR; a data dir gets a
 * copy, and `<file>.stamp` (the hash) makes a second call with the same inputs a no-op. The
 * initramfs, which holds no keys, is cached there by the hash of its own inputs: other keys (each
 * data dir's portal key) cost only a new FAT disk around it, not a new initramfs. The
 * initramfs is reproducible (sorted cpio with fixed owners and times, gzip without a name or time)
 * and the FAT image uses `mkfs.fat --invariant` and SOURCE_DATE_EPOCH.
 *
 * CLI: npx tsx server/src/seed/tiny-linux.ts OUT.qcow2 [AUTHORIZED_KEYS_FILE]
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fsp, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { TINY_LINUX_MODULES, syslinuxConfig, tinyLinuxTextFiles } from './tiny-linux-files.ts';
import { pruneTinyLinuxCache } from './tiny-linux-cache.ts';

const execFileAsync = promisify(execFile);

export { TINY_LINUX_BANNER } from './tiny-linux-files.ts';

/** Bumped when the recipe changes in a way the hashed inputs do not show. */
const RECIPE = 'tiny-linux-1';
const FIXED_TIME = 1_700_000_000; // 2023-11-14, the files' mtime in the images
const DISK_KIB = 40 * 1024;

/** Thrown when a package the build needs is not installed. */
export class TinyLinuxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TinyLinuxUnavailableError';
  }
}

/** The host files the guest is made of. */
export interface TinyLinuxSources {
  kernel: string;
  modulesDir: string;
  busybox: string;
  dropbear: string;
  openssl: string;
  syslinuxBios: string;
}

const PACKAGES =
  'apt-get install -y linux-image-cloud-amd64 busybox-static dropbear-bin openssl syslinux mtools dosfstools';

/** The newest cloud kernel in /boot and the other inputs; throws when one is missing. */
export function tinyLinuxSources(bootDir = '/boot'): TinyLinuxSources {
  const kernels = existsSync(bootDir)
    ? readdirSync(bootDir)
        .filter((f) => /^vmlinuz-.*-cloud-amd64$/.test(f))
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    : [];
  const kernel = kernels.at(-1);
  const version = kernel?.slice('vmlinuz-'.length);
  const sources = {
    kernel: kernel ? path.join(bootDir, kernel) : '',
    modulesDir: version ? `/lib/modules/${version}` : '',
    busybox: '/bin/busybox',
    dropbear: '/usr/sbin/dropbear',
    openssl: '/usr/bin/openssl',
    syslinuxBios: '/usr/lib/syslinux/modules/bios',
  };
  const missing = Object.values(sources).filter((f) => !f || !existsSync(f));
  for (const tool of ['/usr/bin/syslinux', '/usr/bin/mcopy', '/usr/sbin/mkfs.fat'])
    if (!existsSync(tool)) missing.push(tool);
  if (missing.length > 0 || !kernel)
    throw new TinyLinuxUnavailableError(
      `Tiny Linux needs Debian packages (missing ${missing.join(', ') || 'a cloud kernel'}): ${PACKAGES}`,
    );
  return sources;
}

/** The shared libraries a dynamic binary loads (from `ldd`), the loader included. */
async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await execFileAsync('ldd', [binary]);
  return [...stdout.matchAll(/(\/\S+)/g)].map((m) => m[1] ?? '').filter(Boolean);
}

/** The shared libraries of the guest's dynamic programs (dropbear, openssl), each once. */
async function dynamicLibraries(sources: TinyLinuxSources): Promise<string[]> {
  const lists = await Promise.all([sources.dropbear, sources.openssl].map(sharedLibraries));
  return [...new Set(lists.flat())];
}

/** Module file paths (relative to the modules dir) by module name, from modules.dep. */
async function modulePaths(modulesDir: string): Promise<Map<string, string>> {
  const dep = await fsp.readFile(path.join(modulesDir, 'modules.dep'), 'utf8');
  const byName = new Map<string, string>();
  for (const line of dep.split('\n')) {
    const file = line.split(':')[0];
    if (file) byName.set(path.basename(file).replace(/\.ko(\.\w+)?$/, ''), file);
  }
  return byName;
}

async function hashFiles(files: string[], extra: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    const stat = await fsp.stat(file);
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\0`);
  }
  for (const text of extra) hash.update(`${text}\0`);
  return hash.digest('hex');
}

/** Everything the image is made of, before it is packed. */
async function stageRoot(
  root: string,
  sources: TinyLinuxSources,
  guest: { user: string; passwordHash: string },
): Promise<string[]> {
  const inputs: string[] = [sources.kernel, sources.busybox, sources.dropbear, sources.openssl];
  const put = async (rel: string, from: string, mode?: number) => {
    const to = path.join(root, rel);
    await fsp.mkdir(path.dirname(to), { recursive: true });
    await fsp.copyFile(from, to);
    if (mode !== undefined) await fsp.chmod(to, mode);
  };
  for (const dir of ['proc', 'sys', 'dev', 'tmp', 'root', 'www', 'etc/dropbear', 'var/run'])
    await fsp.mkdir(path.join(root, dir), { recursive: true });
  await fsp.mkdir(path.join(root, 'home', guest.user), { recursive: true });
  await put('bin/busybox', sources.busybox, 0o755);
  const { stdout } = await execFileAsync(sources.busybox, ['--list-full']);
  for (const applet of stdout.split('\n').filter(Boolean)) {
    if (applet === 'bin/busybox') continue;
    const link = path.join(root, applet);
    await fsp.mkdir(path.dirname(link), { recursive: true });
    await fsp.rm(link, { force: true });
    await fsp.symlink(path.relative(path.dirname(link), path.join(root, 'bin/busybox')), link);
  }
  await put('usr/sbin/dropbear', sources.dropbear, 0o755);
  await put('usr/bin/openssl', sources.openssl, 0o755);
  for (const lib of await dynamicLibraries(sources)) {
    const real = await fsp.realpath(lib);
    await put(lib.slice(1), real, 0o755);
    inputs.push(real);
  }
  const modules = await modulePaths(sources.modulesDir);
  for (const name of TINY_LINUX_MODULES) {
    const rel = modules.get(name);
    if (!rel) throw new TinyLinuxUnavailableError(`kernel module ${name} not found`);
    const file = path.join(sources.modulesDir, rel);
    if (!file.endsWith('.ko'))
      throw new TinyLinuxUnavailableError(`compressed kernel module ${file}`);
    await put(`lib/modules/${name}.ko`, file, 0o644);
    inputs.push(file);
  }
  for (const file of tinyLinuxTextFiles(guest)) {
    const to = path.join(root, file.path);
    await fsp.mkdir(path.dirname(to), { recursive: true });
    await fsp.writeFile(to, file.text);
    await fsp.chmod(to, file.mode);
  }
  return inputs;
}

/** A sorted, reproducible newc cpio (owners root, fixed times), gzipped without name or time. */
async function packInitramfs(root: string, out: string): Promise<void> {
  await execFileAsync(
    'sh',
    [
      '-c',
      `find . -exec touch -h -d @${FIXED_TIME} {} + && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet | gzip -9 -n > "$1"`,
      'sh',
      out,
    ],
    { cwd: root },
  );
}

export interface WriteTinyLinuxOptions {
  /** authorized_keys text for root's SSH (dropbear); empty = no SSH login. */
  authorizedKeys?: string;
  /** The console account (uid 1000) and the password of it and of root. */
  user?: string;
  password?: string;
  qemuImg?: string;
  /** Where built disks are kept by the hash of their inputs. Default TINY_LINUX_CACHE_DIR. */
  cacheDir?: string;
  log?: (line: string) => void;
}

/** The machine's cache of built disks: a data dir or a test gets a copy, not a build. */
export const TINY_LINUX_CACHE_DIR = path.join(os.tmpdir(), 'vdi-tiny-linux');

/** crypt(3) SHA-512 hash with a salt derived from the password (reproducible). */
async function passwordHash(password: string): Promise<string> {
  const salt = createHash('sha256').update(password).digest('hex').slice(0, 16);
  const { stdout } = await execFileAsync('openssl', ['passwd', '-6', '-salt', salt, password]);
  return stdout.trim();
}

/**
 * Write the Tiny Linux disk (qcow2) at `file` unless `<file>.stamp` shows the same inputs. Through
 * a temporary name and a rename, so a running QEMU with the old file open keeps its copy.
 * Returns whether it was built.
 */
export async function writeTinyLinuxDisk(
  file: string,
  options: WriteTinyLinuxOptions = {},
): Promise<boolean> {
  const sources = tinyLinuxSources();
  const guest = {
    user: options.user ?? 'isard',
    passwordHash: await passwordHash(options.password ?? 'pirineus'),
  };
  const keys = options.authorizedKeys ?? '';
  const cfg = syslinuxConfig(keys);
  const texts = tinyLinuxTextFiles(guest).map((f) => f.text);
  const stamp = `${file}.stamp`;
  const libs = await dynamicLibraries(sources);
  // The initramfs does not hold the keys (they are on the kernel command line): a portal with keys
  // of its own reuses the machine's initramfs and only writes the small FAT disk around it.
  const initrdKey = await hashFiles(
    [
      sources.kernel,
      sources.busybox,
      sources.dropbear,
      sources.openssl,
      ...libs,
      sources.modulesDir,
    ],
    [RECIPE, ...texts],
  );
  const key = createHash('sha256').update(`${initrdKey}\0${cfg}`).digest('hex');
  if (existsSync(file) && existsSync(stamp) && (await fsp.readFile(stamp, 'utf8')) === key)
    return false;
  const cacheDir = options.cacheDir ?? TINY_LINUX_CACHE_DIR;
  const cached = path.join(cacheDir, `${key}.qcow2`);
  if (!existsSync(cached)) {
    const initrd = await cachedInitramfs(path.join(cacheDir, `${initrdKey}.initrd.gz`), {
      sources,
      guest,
    });
    await buildDisk(cached, { sources, initrd, cfg, qemuImg: options.qemuImg });
    await pruneTinyLinuxCache(cacheDir);
  } else {
    // Its use keeps it in the cache (pruneTinyLinuxCache keeps the latest used).
    const now = new Date();
    await fsp.utimes(cached, now, now).catch(() => undefined);
  }
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.copyFile(cached, tmp);
    await fsp.chmod(tmp, 0o644);
    await fsp.rename(tmp, file);
    await fsp.writeFile(stamp, key);
  } finally {
    await fsp.rm(tmp, { force: true });
  }
  options.log?.(`wrote the Tiny Linux disk ${file}`);
  return true;
}

/** The initramfs at `file`, packed there first (through a temporary name) when missing. */
async function cachedInitramfs(
  file: string,
  parts: { sources: TinyLinuxSources; guest: { user: string; passwordHash: string } },
): Promise<string> {
  // Used: kept in the cache (see pruneTinyLinuxCache).
  if (existsSync(file))
    return fsp.utimes(file, new Date(), new Date()).then(
      () => file,
      () => file,
    );
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'tiny-linux-initrd-'));
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const root = path.join(work, 'root');
    await stageRoot(root, parts.sources, parts.guest);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await packInitramfs(root, tmp);
    await fsp.rename(tmp, file);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
    await fsp.rm(tmp, { force: true });
  }
  return file;
}

/** Build the disk at `file` (through a temporary name) around the initramfs `initrd`. */
async function buildDisk(
  file: string,
  parts: {
    sources: TinyLinuxSources;
    initrd: string;
    cfg: string;
    qemuImg: string | undefined;
  },
): Promise<void> {
  const { sources, cfg } = parts;
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'tiny-linux-'));
  const raw = path.join(work, 'disk.img');
  const tmp = `${file}.tmp-${process.pid}`;
  const env = { ...process.env, SOURCE_DATE_EPOCH: String(FIXED_TIME), MTOOLS_SKIP_CHECK: '1' };
  try {
    const boot = path.join(work, 'boot');
    await fsp.mkdir(boot);
    await fsp.copyFile(parts.initrd, path.join(boot, 'initrd.gz'));
    await fsp.copyFile(sources.kernel, path.join(boot, 'vmlinuz'));
    await fsp.writeFile(path.join(boot, 'syslinux.cfg'), cfg);
    for (const f of ['ldlinux.c32'])
      await fsp.copyFile(path.join(sources.syslinuxBios, f), path.join(boot, f));
    await execFileAsync('sh', ['-c', `touch -d @${FIXED_TIME} "$1"/*`, 'sh', boot]);
    // A whole-disk FAT file system ("superfloppy"): the BIOS runs syslinux's boot sector.
    await execFileAsync(
      'mkfs.fat',
      ['--invariant', '-i', '7111e001', '-n', 'TINYLINUX', '-C', raw, String(DISK_KIB)],
      { env },
    );
    await execFileAsync('syslinux', ['--install', raw], { env });
    const names = ['vmlinuz', 'initrd.gz', 'syslinux.cfg', 'ldlinux.c32'];
    await execFileAsync(
      'mcopy',
      ['-o', '-m', '-i', raw, ...names.map((n) => path.join(boot, n)), '::'],
      {
        env,
      },
    );
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await execFileAsync(parts.qemuImg ?? 'qemu-img', [
      'convert',
      '-q',
      '-f',
      'raw',
      '-O',
      'qcow2',
      raw,
      tmp,
    ]);
    await fsp.chmod(tmp, 0o644);
    await fsp.rename(tmp, file);
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
    await fsp.rm(tmp, { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: npx tsx server/src/seed/tiny-linux.ts OUT.qcow2 [AUTHORIZED_KEYS_FILE]');
    process.exitCode = 2;
  } else {
    const keysFile = process.argv[3];
    const authorizedKeys = keysFile ? await fsp.readFile(keysFile, 'utf8') : '';
    const built = await writeTinyLinuxDisk(path.resolve(out), { authorizedKeys });
    console.log(built ? `wrote ${out}` : `${out} is up to date`);
  }
}
