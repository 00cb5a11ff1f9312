import { describe, expect, it } from 'vitest';
import { placeDesktop, type PlacementHost, type PlacementRequest } from './placement.ts';

const now = new Date('2026-11-29T04:00:00Z');
const clock = { now, freshMs: 10_000 };
const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

const host = (id: string, over: Partial<PlacementHost> = {}): PlacementHost => ({
  id,
  enabled: true,
  draining: false,
  lastSeen: secondsAgo(1),
  memoryMib: 8192,
  usedMemoryMib: 0,
  gpuProfiles: [],
  ...over,
});
const desktop = (over: Partial<PlacementRequest> = {}): PlacementRequest => ({
  memoryMib: 1024,
  gpuProfiles: [],
  forced: null,
  ...over,
});

describe('placement', () => {
  it.each<[string, PlacementHost[], PlacementRequest, ReturnType<typeof placeDesktop>]>([
    ['the only host', [host('a')], desktop(), { host: 'a', freeAfterMib: 7168 }],
    [
      'the most free memory after the start',
      [host('a', { usedMemoryMib: 4096 }), host('b', { memoryMib: 6144 })],
      desktop(),
      { host: 'b', freeAfterMib: 5120 },
    ],
    [
      'the bigger host when both are empty',
      [host('small', { memoryMib: 4096 }), host('big', { memoryMib: 65536 })],
      desktop(),
      { host: 'big', freeAfterMib: 64512 },
    ],
    ['the name breaks a tie', [host('b'), host('a')], desktop(), { host: 'a', freeAfterMib: 7168 }],
    [
      'a disabled host is skipped',
      [host('a', { enabled: false, memoryMib: 65536 }), host('b')],
      desktop(),
      { host: 'b', freeAfterMib: 7168 },
    ],
    [
      'a draining host takes no new start',
      [host('a', { draining: true, memoryMib: 65536 }), host('b')],
      desktop(),
      { host: 'b', freeAfterMib: 7168 },
    ],
    [
      'a host silent for longer than the freshness is skipped',
      [host('a', { lastSeen: secondsAgo(11), memoryMib: 65536 }), host('b')],
      desktop(),
      { host: 'b', freeAfterMib: 7168 },
    ],
    [
      'a host never seen is skipped',
      [host('a', { lastSeen: null, memoryMib: 65536 }), host('b')],
      desktop(),
      { host: 'b', freeAfterMib: 7168 },
    ],
    [
      'a GPU desktop goes to a host that offers its profile, even with less memory',
      [host('a', { memoryMib: 65536 }), host('gpu', { gpuProfiles: ['GPU-2Q', 'GPU-4Q'] })],
      desktop({ gpuProfiles: ['GPU-2Q'] }),
      { host: 'gpu', freeAfterMib: 7168 },
    ],
    [
      'a desktop without a GPU may use a GPU host',
      [host('gpu', { gpuProfiles: ['GPU-2Q'], memoryMib: 65536 }), host('a')],
      desktop(),
      { host: 'gpu', freeAfterMib: 64512 },
    ],
    [
      'a GPU profile no host lists runs anywhere (the demo GPUs)',
      [host('a', { gpuProfiles: ['GPU-4Q'] }), host('b', { memoryMib: 65536 })],
      desktop({ gpuProfiles: ['DEMO-2Q'] }),
      { host: 'b', freeAfterMib: 64512 },
    ],
    [
      'exactly full after the start still fits',
      [host('a', { memoryMib: 2048, usedMemoryMib: 1024 })],
      desktop(),
      { host: 'a', freeAfterMib: 0 },
    ],
    [
      'a pinned desktop goes to its host although another has more room',
      [host('a', { memoryMib: 65536 }), host('b')],
      desktop({ forced: 'b' }),
      { host: 'b', freeAfterMib: 7168 },
    ],
  ])('chooses %s', (_name, hosts, request, expected) => {
    expect(placeDesktop(hosts, request, clock)).toEqual(expected);
  });

  it.each<[string, PlacementHost[], PlacementRequest, string]>([
    ['no host at all', [], desktop(), 'hypervisors_not_available'],
    [
      'every host disabled, draining or silent',
      [host('a', { enabled: false }), host('b', { draining: true }), host('c', { lastSeen: null })],
      desktop(),
      'hypervisors_not_available',
    ],
    [
      'only a disabled host offers the GPU profile',
      [
        host('a', { gpuProfiles: ['GPU-4Q'] }),
        host('b', { gpuProfiles: ['GPU-2Q'], enabled: false }),
      ],
      desktop({ gpuProfiles: ['GPU-2Q'] }),
      'hypervisors_not_available',
    ],
    [
      'a full cluster',
      [host('a', { usedMemoryMib: 7680 }), host('b', { memoryMib: 512 })],
      desktop(),
      'hypervisors_full',
    ],
    [
      'a pinned host that is draining',
      [host('a'), host('b', { draining: true })],
      desktop({ forced: 'b' }),
      'hypervisor_forced_unavailable',
    ],
    [
      'a pinned host that is gone',
      [host('a')],
      desktop({ forced: 'b' }),
      'hypervisor_forced_unavailable',
    ],
    [
      'a pinned host that is full',
      [host('a'), host('b', { usedMemoryMib: 8000 })],
      desktop({ forced: 'b' }),
      'hypervisors_full',
    ],
  ])('refuses %s', (_name, hosts, request, code) => {
    expect(placeDesktop(hosts, request, clock)).toEqual({ refused: code });
  });

  it('promises memory up to the overcommit percentage of the capacity, and no further', () => {
    // 8 GiB at 200 %: thirty-one 512 MiB desktops already promised leave room for one more.
    const busy = [host('a', { usedMemoryMib: 31 * 512 })];
    const overcommit = { ...clock, memoryOvercommitPercent: 200 };
    expect(placeDesktop(busy, desktop({ memoryMib: 512 }), overcommit)).toEqual({
      host: 'a',
      freeAfterMib: 0,
    });
    expect(placeDesktop(busy, desktop({ memoryMib: 513 }), overcommit)).toEqual({
      refused: 'hypervisors_full',
    });
    // Without overcommit the same host was full long before.
    expect(placeDesktop(busy, desktop({ memoryMib: 512 }), clock)).toEqual({
      refused: 'hypervisors_full',
    });
  });
});
