import { execFile } from 'node:child_process';
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDriver } from './driver-suite.ts';
import { createLibvirtDriver } from './libvirt-driver.ts';
import {
  destroySessionDomains,
  ensureTestUser,
  freePort,
  sessionDomainPid,
  startSshTestHost,
  type SshTestHost,
} from './libvirt-test-host.ts';
import { demoImages, demoSpec, tempDataDir } from './test-support.ts';
import { VirshSession } from './virsh-session.ts';

const execFileAsync = promisify(execFile);
const USER = 'vdi-hv-a';
/** Domain names of this run: a run never touches another's domains on the shared test user. */
const PREFIX = `t${process.pid}-`;

describeDriver('libvirt driver (qemu+ssh to a session daemon on loopback, TCG)', async () => {
  const user = ensureTestUser(USER);
  const host = await startSshTestHost(user);
  const tmp = tempDataDir('vdi-libvirt-driver-');
  // The session daemon's QEMU runs as the test user: it walks into the data dir to its disks.
  chmodSync(tmp.dir, 0o755);
  return {
    dataDir: tmp.dir,
    make: () =>
      createLibvirtDriver({
        uri: host.uri,
        dataDir: tmp.dir,
        accel: 'tcg',
        domainPrefix: PREFIX,
        diskOwner: { uid: user.uid, gid: user.gid },
        pollMs: 1000,
      }),
    pidOf: (rt) => sessionDomainPid(user, `${PREFIX}${rt.id}`),
    exitCodes: false,
    exitSignals: false,
    killedReason: /ended unexpectedly|disappeared/,
    staleReason: /no longer runs on qemu\+ssh:\/\/vdi-hv-a@127\.0\.0\.1:\d+\/session$/,
    spiceTls: false,
    runFiles: ['runtime.json'],
    keptFiles: [],
    cleanup: async () => {
      destroySessionDomains(user, PREFIX);
      await host.stop();
      tmp.cleanup();
    },
  };
});

describe('libvirt connection latency', () => {
  let host: SshTestHost;
  beforeAll(async () => {
    host = await startSshTestHost(ensureTestUser(USER));
  });
  afterAll(async () => {
    await host.stop();
  });

  /** Time of one `virsh list --name` run as a process of its own (a connection per call). */
  async function oneShot(virsh: string, uri: string): Promise<number> {
    const t = performance.now();
    await execFileAsync(virsh, ['-q', '-c', uri, 'list', '--name'], { cwd: '/' });
    return performance.now() - t;
  }

  /**
   * Through a long-lived virsh: the first call (connecting, and a `domstate` of a missing domain),
   * then the median of 21 `list --name`.
   */
  async function medianCall(session: VirshSession): Promise<{ first: number; median: number }> {
    const t0 = performance.now();
    await expect(session.run(['domstate', `${PREFIX}none`])).rejects.toThrow(
      /failed to get domain/,
    );
    const first = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t = performance.now();
      expect(await session.run(['list', '--name'])).toBeTypeOf('string');
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { first, median: times[10] ?? 0 };
  }

  it('answers one call in a few milliseconds over SSH and directly, the connection kept open', async () => {
    const ssh = new VirshSession({ uri: host.uri });
    const direct = new VirshSession({ uri: 'qemu:///session', virsh: host.directVirsh });
    try {
      const overSsh = await medianCall(ssh);
      const local = await medianCall(direct);
      const sshOnce = await oneShot('virsh', host.uri);
      const localOnce = await oneShot(host.directVirsh, 'qemu:///session');
      console.log(
        `[measure] one virsh call: over SSH ${overSsh.median.toFixed(2)} ms (connect + first ${overSsh.first.toFixed(0)} ms, ` +
          `a virsh process per call ${sshOnce.toFixed(0)} ms), direct ${local.median.toFixed(2)} ms ` +
          `(connect + first ${local.first.toFixed(0)} ms, a virsh process per call ${localOnce.toFixed(0)} ms)`,
      );
      expect(overSsh.median).toBeLessThan(100);
      expect(local.median).toBeLessThan(100);
    } finally {
      ssh.close();
      direct.close();
    }
  });
});

describe('libvirt driver and a host that does not answer', () => {
  it('refuses a start with start_failed naming the host (not its key file), and runs nothing', async () => {
    const tmp = tempDataDir('vdi-libvirt-down-');
    const port = await freePort();
    const host = `qemu+ssh://nobody@127.0.0.1:${port}/session`;
    const driver = createLibvirtDriver({
      uri: `${host}?keyfile=/nonexistent/key&no_verify=1`,
      dataDir: tmp.dir,
      domainPrefix: PREFIX,
    });
    try {
      const disk = path.join(tmp.dir, 'disk.qcow2');
      await driver.prepareDisk({ path: disk, backingFile: (await demoImages()).template });
      const error: unknown = await driver.start(demoSpec('down', disk)).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'HypervisorError', code: 'start_failed' });
      const message = error instanceof Error ? error.message : '';
      expect(message).toContain(host);
      expect(message).not.toContain('keyfile');
      expect(await driver.status('down')).toBe('absent');
      expect(await driver.list()).toEqual([]);
      await expect(driver.pause('down')).rejects.toMatchObject({ code: 'not_running' });
      await expect(driver.adopt()).rejects.toMatchObject({ code: 'command_failed' });
      // the disk is not held by a domain that never ran
      await driver.deleteDisk(disk);
    } finally {
      await driver.close();
      tmp.cleanup();
    }
  });
});
