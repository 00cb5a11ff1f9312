import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestUser, startSshTestHost, type SshTestHost } from './libvirt-test-host.ts';
import { VirshSession } from './virsh-session.ts';

const USER = 'vdi-hv-a';
const PREFIX = `t${process.pid}-`;

describe('libvirt connection latency', () => {
  let host: SshTestHost;
  beforeAll(async () => {
    host = await startSshTestHost(ensureTestUser(USER));
  });
  afterAll(async () => {
    await host.stop();
  });

  /** Median time of one `domstate` through a long-lived virsh, after the connection is up. */
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
      console.log(
        `[measure] one virsh call: over SSH ${overSsh.median.toFixed(2)} ms (connect + first ${overSsh.first.toFixed(0)} ms), ` +
          `direct ${local.median.toFixed(2)} ms (connect + first ${local.first.toFixed(0)} ms)`,
      );
      expect(overSsh.median).toBeLessThan(100);
      expect(local.median).toBeLessThan(100);
    } finally {
      ssh.close();
      direct.close();
    }
  });
});
