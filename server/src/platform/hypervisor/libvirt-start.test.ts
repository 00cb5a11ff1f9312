import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDomain, type CreateContext } from './libvirt-start.ts';
import { demoSpec, tempDataDir } from './test-support.ts';
import { HypervisorError } from './types.ts';
import { VirshError } from './virsh-session.ts';

/**
 * libvirt's answer to `virsh create` when QEMU exits before libvirt reaches its monitor (seen on a
 * loaded machine for a disk that is no qcow2 image): QEMU's own reason is not in it.
 */
const MONITOR_REFUSED = new VirshError(
  'Failed to create domain from domain.xml; failed to connect to monitor socket: Connection refused',
  [
    'Failed to create domain from domain.xml',
    'failed to connect to monitor socket: Connection refused',
  ],
);

let tmp: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  tmp = tempDataDir('vdi-libvirt-start-');
});
afterEach(() => tmp.cleanup());

/** A start context whose host answers every `virsh create` with `answer`. */
function refusingHost(answer: Error): { ctx: CreateContext; commands: string[][] } {
  const commands: string[][] = [];
  const ctx: CreateContext = {
    session: {
      run: (args: string[]) => {
        commands.push(args);
        return Promise.reject(answer);
      },
    } as unknown as CreateContext['session'],
    host: 'host-a',
    accel: 'tcg',
    spiceTls: false,
    consoleAddress: '127.0.0.1',
    startTimeoutMs: 1_000,
    domainName: 'vdi-broken',
    runDir: path.join(tmp.dir, 'run', 'broken'),
    volumePath: () => Promise.resolve(undefined),
    nics: [],
    onBridgeRefused: () => undefined,
    failure: (error, code, what) =>
      new HypervisorError(code, `${what}: ${(error as Error).message}`, { cause: error }),
  };
  return { ctx, commands };
}

describe('a start libvirt refuses', () => {
  it('names a main disk that is no qcow2 image when libvirt says only that the monitor refused', async () => {
    const disk = path.join(tmp.dir, 'not-a-disk.qcow2');
    writeFileSync(disk, 'this is not a qcow2 image');
    const { ctx, commands } = refusingHost(MONITOR_REFUSED);
    const error = await createDomain(ctx, demoSpec('broken', disk)).catch((e: unknown) => e);
    expect(commands.map((args) => args[0])).toEqual(['create']);
    expect(error).toMatchObject({ name: 'HypervisorError', code: 'start_failed' });
    expect((error as Error).message).toContain(`the disk ${disk} is not in qcow2 format`);
    // libvirt's own words stay in the message.
    expect((error as Error).message).toContain('failed to connect to monitor socket');
  });

  it('keeps libvirt’s words alone when the disk is a qcow2 image', async () => {
    const disk = path.join(tmp.dir, 'disk.qcow2');
    writeFileSync(disk, Buffer.concat([Buffer.from('QFI\xfb', 'latin1'), Buffer.alloc(100)]));
    const { ctx } = refusingHost(MONITOR_REFUSED);
    const error = await createDomain(ctx, demoSpec('broken', disk)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'HypervisorError', code: 'start_failed' });
    expect((error as Error).message).toBe(
      `start of broken on host-a failed: ${MONITOR_REFUSED.message}`,
    );
  });
});
