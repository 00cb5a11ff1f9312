// Installs what is missing: npm dependencies, and (as root, through apt) QEMU, the GRUB rescue
// images, Chromium, PostgreSQL and, for the tests, libvirt and sshd. Shared by `npm start` and
// `npm test`.
import { execSync, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = new URL('../..', import.meta.url).pathname;

const log = (msg) => console.log(`[bootstrap] ${msg}`);

/**
 * Whether node_modules holds what the lock file names: every package npm recorded as installed
 * (`node_modules/.package-lock.json`) at the lock's version, and every package the lock requires
 * on every platform installed. A lock file only touched (a checkout, a branch switch) is no reason
 * to install again.
 */
export function installedAsLocked(lock, stamp) {
  try {
    const wanted = JSON.parse(readFileSync(lock, 'utf8')).packages ?? {};
    const have = JSON.parse(readFileSync(stamp, 'utf8')).packages ?? {};
    for (const [path, entry] of Object.entries(have))
      if (wanted[path]?.version !== entry.version) return false;
    for (const [path, entry] of Object.entries(wanted))
      if (path !== '' && !entry.optional && !entry.link && !have[path]) return false;
    return true;
  } catch {
    return false;
  }
}

export function ensureNodeModules() {
  const nm = join(root, 'node_modules');
  const lock = join(root, 'package-lock.json');
  const stamp = join(nm, '.package-lock.json');
  const stale =
    !existsSync(stamp) ||
    (existsSync(lock) &&
      statSync(lock).mtimeMs > statSync(stamp).mtimeMs + 1000 &&
      !installedAsLocked(lock, stamp));
  if (!existsSync(nm) || stale) {
    log('installing npm dependencies (npm ci)');
    try {
      execSync('npm ci --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
    } catch {
      // A registry mirror that lacks some platforms' optional binaries (unrs-resolver's, for
      // example) makes npm write a lock that `npm ci` then calls out of sync; `npm install`
      // installs the same locked versions and skips what this platform does not need.
      log('npm ci refused the lock file; installing the locked versions with npm install');
      execSync('npm install --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
    }
  }
}

const SYSTEM = [
  {
    check: () => existsSync('/usr/bin/qemu-system-x86_64'),
    pkg: 'qemu-system-x86',
    why: 'runs the desktops',
  },
  { check: () => existsSync('/usr/bin/qemu-img'), pkg: 'qemu-utils', why: 'creates desktop disks' },
  {
    check: () => existsSync('/usr/bin/openssl'),
    pkg: 'openssl',
    why: "makes the certificates of the SPICE consoles' TLS",
  },
  {
    check: () => existsSync('/usr/lib/grub-rescue/grub-rescue-cdrom.iso'),
    pkg: 'grub-rescue-pc',
    why: 'demo template and media images',
  },
  // The Tiny Linux template (server/src/seed/tiny-linux.ts): without them, the seed skips it.
  {
    check: () =>
      existsSync('/boot') && readdirSync('/boot').some((f) => /^vmlinuz-.*-cloud-amd64$/.test(f)),
    pkg: 'linux-image-cloud-amd64',
    why: "the Tiny Linux guest's kernel",
  },
  {
    check: () => existsSync('/bin/busybox'),
    pkg: 'busybox-static',
    why: "the Tiny Linux guest's programs",
  },
  {
    check: () => existsSync('/usr/sbin/dropbear'),
    pkg: 'dropbear-bin',
    why: "the Tiny Linux guest's SSH server",
  },
  {
    check: () => existsSync('/usr/bin/openssl'),
    pkg: 'openssl',
    why: "the Tiny Linux guest's HTTPS server",
  },
  {
    check: () => existsSync('/usr/bin/syslinux'),
    pkg: 'syslinux',
    why: "boots the Tiny Linux guest's disk",
  },
  {
    check: () => existsSync('/usr/lib/syslinux/modules/bios/ldlinux.c32'),
    pkg: 'syslinux-common',
    why: "boots the Tiny Linux guest's disk",
  },
  {
    check: () => existsSync('/usr/bin/mcopy'),
    pkg: 'mtools',
    why: "writes the Tiny Linux guest's disk",
  },
  {
    check: () => existsSync('/usr/sbin/mkfs.fat'),
    pkg: 'dosfstools',
    why: "formats the Tiny Linux guest's disk",
  },
  // Desktop networks as root (server/src/platform/hypervisor/host-networks.ts).
  {
    check: () => existsSync('/usr/sbin/dnsmasq'),
    pkg: 'dnsmasq-base',
    why: "DHCP and DNS of the desktops' networks",
  },
  { check: () => existsSync('/usr/sbin/nft'), pkg: 'nftables', why: 'NAT of the desktop network' },
  // The users' VPN endpoint (server/src/domains/account/vpn-endpoint.ts).
  {
    check: () => existsSync('/usr/bin/wg'),
    pkg: 'wireguard-tools',
    why: "configures the users' VPN endpoint",
  },
  {
    check: () => existsSync('/usr/bin/wireguard-go'),
    pkg: 'wireguard-go',
    why: "the users' VPN endpoint when the kernel has no WireGuard module",
  },
];
const TEST_ONLY = [
  {
    check: () => existsSync('/usr/bin/chromium-headless-shell'),
    pkg: 'chromium-headless-shell',
    why: 'end-to-end tests (the headless Chromium: half the CPU of the full browser)',
  },
  {
    check: () => existsSync('/usr/bin/remote-viewer'),
    pkg: 'virt-viewer',
    why: 'the SPICE test opens a downloaded .vv in a real client',
  },
  { check: () => existsSync('/usr/bin/Xvfb'), pkg: 'xvfb', why: "the SPICE client's display" },
  {
    check: () => existsSync('/usr/bin/xwininfo'),
    pkg: 'x11-utils',
    why: "finds the SPICE client's window",
  },
  {
    check: () => existsSync('/usr/bin/xwd'),
    pkg: 'x11-apps',
    why: "reads the SPICE client's pixels",
  },
  {
    check: () => existsSync('/usr/bin/virsh'),
    pkg: 'libvirt-clients',
    why: 'the libvirt driver talks to its hosts through virsh',
  },
  {
    check: () =>
      existsSync('/usr/sbin/libvirtd') &&
      existsSync('/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so'),
    pkg: 'libvirt-daemon libvirt-daemon-driver-qemu',
    why: "the libvirt driver tests run their guests under a test user's session daemon",
  },
  {
    check: () => existsSync('/usr/sbin/sshd'),
    pkg: 'openssh-server',
    why: 'the libvirt driver tests reach their host over SSH on loopback, as production does',
  },
  {
    check: () =>
      existsSync('/usr/lib/postgresql') ||
      spawnSync('sh', ['-c', 'command -v initdb']).status === 0,
    pkg: 'postgresql',
    why: 'server tests on a real PostgreSQL',
  },
  {
    check: () => existsSync('/usr/sbin/slapd') && existsSync('/usr/bin/ldapsearch'),
    pkg: 'slapd ldap-utils',
    why: 'the LDAP login tests sign in against a real OpenLDAP directory',
  },
  {
    check: () => existsSync('/usr/sbin/haproxy'),
    pkg: 'haproxy',
    why: 'the cluster test runs two portal nodes behind a real load balancer',
  },
];
/** What `npm run cluster` needs beside `npm start`'s: a PostgreSQL and HAProxy. */
const CLUSTER = TEST_ONLY.filter((p) => p.pkg === 'postgresql' || p.pkg === 'haproxy');

/** The packages wanted and not there, or null after telling a non-root user what to install. */
function missingPackages({ forTests = false, forCluster = false }) {
  const extra = forTests ? TEST_ONLY : forCluster ? CLUSTER : [];
  const wanted = [...SYSTEM, ...extra].filter((p) => !p.check());
  if (wanted.length > 0 && process.getuid?.() !== 0) {
    for (const p of wanted)
      log(`missing ${p.pkg} (${p.why}); install it with: sudo apt-get install -y ${p.pkg}`);
    return null;
  }
  return wanted;
}

/**
 * The apt run and its environment. On a CI machine (thrown away after the run) dpkg skips its
 * fsyncs and the kernel package builds no initramfs: the Tiny Linux guest boots with the one its
 * seed builds, so the package's own is never read, and making it is most of the install's CPU.
 */
function aptRun(wanted) {
  const ci = Boolean(process.env.CI);
  const names = wanted.map((p) => p.pkg).join(' ');
  const options = ci ? '-o Dpkg::Options::=--force-unsafe-io ' : '';
  return {
    names,
    script: `apt-get update -qq && apt-get install -y -qq --no-install-recommends ${options}${names}`,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...(ci ? { INITRD: 'No' } : {}) },
  };
}

/** Installs missing system packages with apt when root; otherwise prints what to install. */
export function ensureSystemPackages(options = {}) {
  const wanted = missingPackages(options);
  if (wanted === null) return false;
  if (wanted.length === 0) return true;
  const { names, script, env } = aptRun(wanted);
  log(`apt-get install -y ${names}`);
  execSync(script, { stdio: 'inherit', env });
  return wanted.every((p) => p.check());
}

/**
 * ensureSystemPackages in the background, so that `npm ci` and the steps that need no system
 * package run meanwhile: apt's output is kept and printed once it ends (whole when it failed).
 */
export function startSystemPackages(options = {}) {
  const wanted = missingPackages(options);
  if (wanted === null) return Promise.resolve(false);
  if (wanted.length === 0) return Promise.resolve(true);
  const { names, script, env } = aptRun(wanted);
  log(`apt-get install -y ${names} (in the background)`);
  const started = Date.now();
  // A file, not a pipe: `npm ci` blocks this process meanwhile, and a full pipe would stall apt.
  const logDir = mkdtempSync(join(tmpdir(), 'vdi-apt-'));
  const logFile = join(logDir, 'apt.log');
  const fd = openSync(logFile, 'w');
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script], { env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (code === 0) log(`apt-get install ended in ${seconds} s`);
      else {
        const output = readFileSync(logFile, 'utf8').trimEnd();
        log(`apt-get install failed (exit ${code}) after ${seconds} s:\n${output}`);
      }
      rmSync(logDir, { recursive: true, force: true });
      resolve(wanted.every((p) => p.check()));
    });
  });
}
