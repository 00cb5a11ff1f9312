import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHypervisorDriver } from './driver-factory.ts';
import { tempDataDir } from './test-support.ts';
import type { Hypervisor } from './types.ts';

describe('createHypervisorDriver', () => {
  const tmp = tempDataDir('vdi-driver-factory-');
  const made: Hypervisor[] = [];
  afterEach(async () => {
    for (const d of made.splice(0)) await d.close();
  });
  afterAll(() => tmp.cleanup());

  it('makes the local QEMU driver without a URI, the libvirt driver with one', () => {
    const local = createHypervisorDriver({ dataDir: tmp.dir, accel: 'tcg' });
    const remote = createHypervisorDriver({
      dataDir: tmp.dir,
      accel: 'kvm',
      hypervisorUri: 'qemu+ssh://vdi@host1/system',
    });
    made.push(local, remote);
    expect(local).toMatchObject({ kind: 'qemu', accel: 'tcg' });
    expect(remote).toMatchObject({ kind: 'libvirt', accel: 'kvm' });
  });
});
