import { describe, expect, it } from 'vitest';
import { portWasTaken } from './qemu-spawn.ts';

describe('portWasTaken', () => {
  it('knows a SPICE port taken by another process (the start is retried on other ports)', () => {
    const log = [
      'qemu-system-x86_64: warning: Spice: ../server/reds.cpp:2585:reds_init_socket: binding socket to 127.0.0.1:15927 failed',
      'qemu-system-x86_64: warning: Spice: ../server/reds.cpp:3442:do_spice_init: Failed to open SPICE sockets',
      'qemu-system-x86_64: failed to initialize spice server',
    ].join('\n');
    expect(portWasTaken(log)).toBe(true);
  });

  it('knows a VNC port taken', () => {
    expect(
      portWasTaken(
        'qemu-system-x86_64: -vnc 127.0.0.1:31: Failed to start VNC server: Failed to bind socket',
      ),
    ).toBe(true);
  });

  it('does not take another failure for a port clash', () => {
    expect(portWasTaken('qemu-system-x86_64: -drive file=x.qcow2: Could not open x.qcow2')).toBe(
      false,
    );
  });
});
