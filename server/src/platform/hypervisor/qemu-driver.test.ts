import { describeDriver } from './driver-suite.ts';
import { createQemuDriver } from './qemu-driver.ts';
import { tempDataDir } from './test-support.ts';

describeDriver('QEMU driver (real QEMU, TCG)', async () => {
  const tmp = tempDataDir('vdi-qemu-driver-');
  return {
    dataDir: tmp.dir,
    make: () => createQemuDriver({ dataDir: tmp.dir, accel: 'tcg' }),
    pidOf: (rt) => rt.pid,
    exitCodes: true,
    exitSignals: true,
    killedReason: /SIGKILL/,
    staleReason: /something went wrong/,
    spiceTls: true,
    runFiles: ['qmp.sock', 'qemu.pid', 'runtime.json', 'qemu.log'],
    keptFiles: ['qemu.log'],
    goneFiles: ['vnc.secret', 'spice.secret'],
    cleanup: async () => tmp.cleanup(),
  };
});
