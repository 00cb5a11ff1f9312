/**
 * A libvirt host for the tests and benchmarks (not production code): an unprivileged local user
 * whose session daemon (`qemu:///session`) runs the domains, reached like a remote host over a
 * private `sshd` on loopback (its own port, host key, client key and config in a temp dir), or
 * directly through `runuser`. Needs root (it creates the user and starts sshd) and the packages
 * `libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients openssh-server`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDataDir } from './test-support.ts';
import { readCmdline } from './host-process.ts';

export interface TestHostUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/**
 * The test user `name`, created when missing (no password, not locked: sshd admits it with a key).
 * Its session daemon's consoles listen on ports of its own (see {@link consolePorts}), away from
 * the QEMU driver's 5900-6899 and from the other test users' daemons, so both drivers' tests and
 * several hosts' starts run side by side.
 */
export function ensureTestUser(name: string): TestHostUser {
  const getent = (db: string) => {
    try {
      return execFileSync('getent', [db, name], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  // Another test file may create or change the user at the same time: the account files are then
  // locked for a moment, so each step is tried again until it holds.
  const settle = (done: () => boolean, step: () => void) => {
    let last: unknown;
    for (let attempt = 0; !done(); attempt++) {
      if (attempt >= 20) throw new Error(`test user ${name}: ${String(last)}`);
      try {
        step();
      } catch (error) {
        last = error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    }
  };
  settle(
    () => getent('passwd') !== '',
    () => execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', name], { stdio: 'pipe' }),
  );
  // `*`: no password can match, but the account is not locked (`!`), which sshd would refuse.
  settle(
    () => getent('shadow').split(':')[1] === '*',
    () => execFileSync('usermod', ['-p', '*', name], { stdio: 'pipe' }),
  );
  const [, , uid = '', gid = '', , home = ''] = getent('passwd').split(':');
  const user = { name, uid: Number(uid), gid: Number(gid), home };
  configureSessionDaemon(user);
  return user;
}

/**
 * The console ports of a test user's session daemon: one of 8 ranges of 1500 ports between 20000
 * and 31999 (below the kernel's ephemeral ports), by uid. Two daemons each choose a free port
 * without knowing of the other's choice: on one range, two starts at once may take the same one.
 */
export function consolePorts(uid: number): { min: number; max: number } {
  const min = 20_000 + (uid % 8) * 1500;
  return { min, max: min + 999 };
}

const qemuConf = (uid: number) => {
  const { min, max } = consolePorts(uid);
  return [
    `remote_display_port_min = ${min}`,
    `remote_display_port_max = ${max}`,
    `remote_websocket_port_min = ${max + 1}`,
    `remote_websocket_port_max = ${max + 500}`,
    '',
  ].join('\n');
};

/**
 * Writes the session daemon's qemu.conf. A daemon that runs with another one is ended (it starts
 * again on demand); a daemon cannot have started before the first one was written, since every
 * test calls this first.
 */
function configureSessionDaemon(user: TestHostUser): void {
  const dir = path.join(user.home, '.config', 'libvirt');
  const file = path.join(dir, 'qemu.conf');
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const conf = qemuConf(user.uid);
  if (before === conf) return;
  runAs(user, 'mkdir', ['-p', dir]);
  writeFileSync(file, conf);
  execFileSync('chown', [`${user.uid}:${user.gid}`, file]);
  if (before === undefined) return;
  const pidFile = path.join(user.home, '.cache', 'libvirt', 'libvirtd.pid');
  try {
    // Only the daemon itself: an empty file would name the process group (0), a stale one another
    // process that got the pid.
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (pid > 1 && readCmdline(pid).some((arg) => arg.endsWith('libvirtd')))
      process.kill(pid, 'SIGTERM');
  } catch {
    /* not running */
  }
}

function runAs(user: TestHostUser, command: string, args: string[]): string {
  return execFileSync('runuser', ['-u', user.name, '--', command, ...args], {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
  });
}

/** The live XML of a domain of the user's session daemon. */
export function sessionDomainXml(user: TestHostUser, domainName: string): string {
  return runAs(user, 'virsh', ['-c', 'qemu:///session', 'dumpxml', domainName]);
}

/** The pid of a domain's QEMU under the user's session daemon (0 when it has none). */
export function sessionDomainPid(user: TestHostUser, domainName: string): number {
  try {
    const file = path.join(user.home, '.cache', 'libvirt', 'qemu', 'run', `${domainName}.pid`);
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/** Destroys the user's running domains whose names start with `prefix`. */
export function destroySessionDomains(user: TestHostUser, prefix: string): void {
  let names: string[] = [];
  try {
    names = runAs(user, 'virsh', ['-c', 'qemu:///session', 'list', '--name']).split('\n');
  } catch {
    return;
  }
  for (const name of names.map((n) => n.trim()).filter((n) => n.startsWith(prefix))) {
    try {
      runAs(user, 'virsh', ['-c', 'qemu:///session', 'destroy', name]);
    } catch {
      /* gone */
    }
  }
}

/** A loopback TCP port nothing listens on (at the time of the call). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface SshTestHost {
  user: TestHostUser;
  port: number;
  /** `qemu+ssh://<user>@127.0.0.1:<port>/session?keyfile=…`: the user's session daemon over SSH. */
  uri: string;
  /** A `virsh` wrapper that runs virsh as the user (for `qemu:///session` without SSH). */
  directVirsh: string;
  /**
   * The host falls silent: sshd and its open connections end (the session daemon and its domains
   * keep running), so nothing reaches the host until {@link up}.
   */
  down: () => Promise<void>;
  /** sshd again, on the same port with the same keys. */
  up: () => Promise<void>;
  /** Stops sshd and removes the temp dir. */
  stop: () => Promise<void>;
}

/** The pids of a process's descendants (from /proc). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone */
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(pid);
  return found;
}

/**
 * Starts a private sshd on a free loopback port that admits only `user` with a key made for it.
 * The client side uses its own known_hosts file (through a `ssh` wrapper given to libvirt as
 * `command=`), so nothing is written to the caller's `~/.ssh`.
 */
export async function startSshTestHost(user: TestHostUser): Promise<SshTestHost> {
  const tmp = tempDataDir('vdi-libvirt-sshd-');
  const dir = tmp.dir;
  chmodSync(dir, 0o755);
  const keygen = (file: string) =>
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
  keygen(path.join(dir, 'host_key'));
  keygen(path.join(dir, 'client_key'));
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(path.join(dir, 'client_key.pub')));
  chmodSync(authorized, 0o644);
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_key')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      `AllowUsers ${user.name}`,
      'PermitRootLogin no',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const spawnSshd = (): ChildProcess =>
    spawn('/usr/sbin/sshd', ['-D', '-f', config, '-E', path.join(dir, 'sshd.log')], {
      stdio: 'ignore',
    });
  let sshd = spawnSshd();
  // sshd never outlives the test process, even when it ends without its clean-up.
  const killSshd = () => {
    if (sshd.exitCode === null) sshd.kill('SIGKILL');
  };
  process.once('exit', killSshd);
  const endSshd = async () => {
    if (sshd.exitCode !== null || sshd.signalCode !== null) return;
    const connections = sshd.pid ? descendants(sshd.pid) : [];
    const exited = new Promise((r) => sshd.once('exit', r));
    sshd.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    for (const pid of connections) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  const ssh = path.join(dir, 'ssh');
  writeFileSync(
    ssh,
    `#!/bin/sh\nexec ssh -o UserKnownHostsFile=${path.join(dir, 'known_hosts')} -o StrictHostKeyChecking=no -o BatchMode=yes "$@"\n`,
  );
  chmodSync(ssh, 0o755);
  const directVirsh = path.join(dir, 'virsh-as-user');
  writeFileSync(directVirsh, `#!/bin/sh\ncd /\nexec runuser -u ${user.name} -- virsh "$@"\n`);
  chmodSync(directVirsh, 0o755);
  await waitForPort(port, 10_000);
  const key = path.join(dir, 'client_key');
  return {
    user,
    port,
    uri: `qemu+ssh://${user.name}@127.0.0.1:${port}/session?keyfile=${key}&command=${ssh}&no_verify=1`,
    directVirsh,
    down: endSshd,
    up: async () => {
      sshd = spawnSshd();
      await waitForPort(port, 10_000);
    },
    stop: async () => {
      process.off('exit', killSshd);
      await endSshd();
      tmp.cleanup();
    },
  };
}
