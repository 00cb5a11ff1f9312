import { describe, expect, it, vi } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import { wireByName } from '@/generated/events';
import { createLiveProvider, keepNewerRecords, listKeyPrefix, previewKey } from './live-provider';

const key = [...listKeyPrefix('desktops'), { filters: [] }];

function setup() {
  const client = new QueryClient();
  client.setQueryData(key, {
    data: [
      { id: 'a', name: 'A', state: 'stopped', version: 3 },
      { id: 'b', name: 'B', state: 'stopped', version: 1 },
    ],
    total: 2,
  });
  const live = createLiveProvider(client);
  const data = () =>
    client.getQueryData(key) as {
      data: { id: string; state: string; version: number }[];
      total: number;
    };
  return { client, live, data };
}

describe('live provider cache patching', () => {
  it('adds a created desktop to the cached list', () => {
    const { live, data } = setup();
    live.dispatch(wireByName['desktops.created'], {
      id: 'c',
      name: 'C',
      state: 'stopped',
      version: 1,
    });
    expect(data().data.map((d) => d.id)).toEqual(['a', 'b', 'c']);
    expect(data().total).toBe(3);
  });

  it('replaces an updated desktop by id with the whole record it carries and keeps the other objects', () => {
    const { live, data } = setup();
    const before = data().data[1];
    live.dispatch(wireByName['desktops.updated'], { id: 'a', state: 'started', version: 4 });
    // A desktop event is the whole list record: a field it leaves out has no value.
    expect(data().data[0]).toEqual({ id: 'a', state: 'started', version: 4 });
    expect(data().data[1]).toBe(before);
  });

  it('merges an update of a resource whose events are not whole records', () => {
    const client = new QueryClient();
    const mediaKey = [...listKeyPrefix('media'), {}];
    client.setQueryData(mediaKey, { data: [{ id: 'm', name: 'M', status: 'x', version: 1 }] });
    const live = createLiveProvider(client);
    live.dispatch(wireByName['media.updated'], { id: 'm', status: 'downloaded', version: 2 });
    expect((client.getQueryData(mediaKey) as { data: unknown[] }).data[0]).toEqual({
      id: 'm',
      name: 'M',
      status: 'downloaded',
      version: 2,
    });
  });

  it('reads the lists of a merged resource again once when an update skips versions', () => {
    vi.useFakeTimers();
    try {
      const client = new QueryClient();
      const mediaKey = [...listKeyPrefix('media'), {}];
      client.setQueryData(mediaKey, { data: [{ id: 'm', status: 'x', version: 1 }] });
      const live = createLiveProvider(client);
      const spy = vi.spyOn(client, 'invalidateQueries');
      live.dispatch(wireByName['media.updated'], { id: 'm', status: 'y', version: 2 });
      vi.advanceTimersByTime(1000);
      expect(spy).not.toHaveBeenCalled();
      // Versions 3 and 4 were missed: one read of the list, however many gaps the burst has.
      live.dispatch(wireByName['media.updated'], { id: 'm', status: 'z', version: 5 });
      live.dispatch(wireByName['media.updated'], { id: 'm', status: 'w', version: 9 });
      vi.advanceTimersByTime(1000);
      expect(spy.mock.calls.map(([filters]) => filters?.queryKey)).toEqual([
        listKeyPrefix('media'),
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("follows the admins' list of live nodes: an arrival, a change and a departure", () => {
    const client = new QueryClient();
    const nodesKey = [...listKeyPrefix('adminNodes'), {}];
    const node = { id: 'node-1', version: '0.1.0', leader: true, jobs: [], leases: [] };
    client.setQueryData(nodesKey, { data: [node], total: 1 });
    const live = createLiveProvider(client);
    const names = () =>
      (client.getQueryData(nodesKey) as { data: { id: string; jobs: string[] }[] }).data;
    live.dispatch(wireByName['adminNodes.created'], { ...node, id: 'node-2', leader: false });
    live.dispatch(wireByName['adminNodes.updated'], { ...node, jobs: ['reconcile'] });
    expect(names().map((n) => [n.id, n.jobs])).toEqual([
      ['node-1', ['reconcile']],
      ['node-2', []],
    ]);
    live.dispatch(wireByName['adminNodes.deleted'], { id: 'node-1' });
    expect(names().map((n) => n.id)).toEqual(['node-2']);
  });

  it('drops a payload older than the cached version', () => {
    const { live, data } = setup();
    live.dispatch(wireByName['desktops.updated'], { id: 'a', state: 'started', version: 2 });
    expect(data().data[0]).toMatchObject({ state: 'stopped', version: 3 });
  });

  it('removes a deleted desktop', () => {
    const { live, data } = setup();
    live.dispatch(wireByName['desktops.deleted'], { id: 'b' });
    expect(data().data.map((d) => d.id)).toEqual(['a']);
    expect(data().total).toBe(1);
  });

  it('shows a change in the first records drawn while the whole list loads', () => {
    const { client, live } = setup();
    client.setQueryData(previewKey('desktops'), [
      { id: 'a', name: 'A', state: 'stopped', version: 3 },
      { id: 'b', name: 'B', state: 'stopped', version: 1 },
    ]);
    const preview = () => client.getQueryData(previewKey('desktops')) as { id: string }[];
    live.dispatch(wireByName['desktops.updated'], {
      id: 'a',
      name: 'A',
      state: 'starting',
      version: 4,
    });
    expect(preview()).toEqual([
      { id: 'a', name: 'A', state: 'starting', version: 4 },
      { id: 'b', name: 'B', state: 'stopped', version: 1 },
    ]);
    // an older event changes nothing; a record they do not hold is not added; a delete removes
    live.dispatch(wireByName['desktops.updated'], { id: 'a', name: 'A', state: 'x', version: 2 });
    live.dispatch(wireByName['desktops.created'], { id: 'c', name: 'C', version: 1 });
    live.dispatch(wireByName['desktops.deleted'], { id: 'b', version: 2 });
    expect(preview()).toEqual([{ id: 'a', name: 'A', state: 'starting', version: 4 }]);
  });

  it('does not refetch on events and invalidates the snapshots once after a reconnect', () => {
    const { client, live } = setup();
    const spy = vi.spyOn(client, 'invalidateQueries');
    live.dispatch(wireByName['desktops.updated'], { id: 'a', state: 'started', version: 9 });
    expect(spy).not.toHaveBeenCalled();
    live.resync();
    expect(
      spy.mock.calls.filter(
        ([filters]) =>
          JSON.stringify(filters?.queryKey) === JSON.stringify(listKeyPrefix('desktops')),
      ),
    ).toHaveLength(1);
  });

  it('notifies refine subscribers of the resource channel', () => {
    const { live } = setup();
    const callback = vi.fn();
    const sub = live.subscribe({ channel: 'resources/desktops', types: ['updated'], callback });
    live.dispatch(wireByName['desktops.updated'], { id: 'a', version: 5 });
    expect(callback).toHaveBeenCalledWith(
      expect.objectContaining({
        type: 'updated',
        payload: expect.objectContaining({ ids: ['a'] }),
      }),
    );
    live.unsubscribe(sub);
    live.dispatch(wireByName['desktops.updated'], { id: 'a', version: 6 });
    expect(callback).toHaveBeenCalledTimes(1);
  });
});

describe('live provider frame batching', () => {
  it('applies a burst of events in one cache write on the next frame, in order', () => {
    vi.useFakeTimers();
    try {
      const client = new QueryClient();
      client.setQueryData(key, { data: [{ id: 'a', state: 'stopped', version: 1 }], total: 1 });
      const live = createLiveProvider(client, { batch: 'frame' });
      const writes = vi.spyOn(client, 'setQueriesData');
      for (let v = 2; v <= 101; v++)
        live.dispatch(wireByName['desktops.updated'], {
          id: 'a',
          state: v % 2 ? 'started' : 'stopped',
          version: v,
        });
      expect((client.getQueryData(key) as { data: { version: number }[] }).data[0]?.version).toBe(
        1,
      );
      vi.advanceTimersByTime(20);
      const listWrites = writes.mock.calls.filter(
        ([filters]) =>
          JSON.stringify(filters.queryKey) === JSON.stringify(listKeyPrefix('desktops')),
      );
      expect(listWrites).toHaveLength(1);
      expect(
        (client.getQueryData(key) as { data: { version: number; state: string }[] }).data[0],
      ).toMatchObject({ version: 101, state: 'started' });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('keepNewerRecords', () => {
  it('keeps a record an event made newer while the list request was in flight', () => {
    const cached = {
      data: [
        { id: 'a', version: 3, state: 'stopped' },
        { id: 'b', version: 1 },
      ],
    };
    const answer = {
      data: [
        { id: 'a', version: 2, state: 'creating' },
        { id: 'b', version: 2, state: 'started' },
        { id: 'c', version: 1 },
      ],
      total: 3,
    };
    const merged = keepNewerRecords(cached, answer) as typeof answer;
    expect(merged.data.map((record) => record.state ?? record.id)).toEqual([
      'stopped',
      'started',
      'c',
    ]);
    expect(merged.total).toBe(3);
  });

  it('finds a newer cached record by id when the answer has the list in another order', () => {
    const cached = {
      data: [
        { id: 'a', version: 1 },
        { id: 'b', version: 1 },
        { id: 'c', version: 5, state: 'started' },
        { id: 'd', version: 1 },
      ],
    };
    // Renamed, so sorted elsewhere; one removed; one new; the newer 'c' now at index 0.
    const answer = {
      data: [
        { id: 'c', version: 4, state: 'starting' },
        { id: 'e', version: 1 },
        { id: 'a', version: 2, state: 'renamed' },
        { id: 'd', version: 1 },
      ],
    };
    const merged = keepNewerRecords(cached, answer) as typeof answer;
    expect(merged.data).toEqual([
      { id: 'c', version: 5, state: 'started' },
      { id: 'e', version: 1 },
      { id: 'a', version: 2, state: 'renamed' },
      { id: 'd', version: 1 },
    ]);
    expect(merged.data[2]).toBe(answer.data[2]);
    expect(answer.data[0]?.state).toBe('starting');
  });

  it('keeps a newer record at the end of a list in the same order, the others from the answer', () => {
    const cached = {
      data: [
        { id: 'a', version: 1 },
        { id: 'b', version: 1 },
        { id: 'z', version: 9 },
      ],
    };
    const answer = {
      data: [
        { id: 'a', version: 2 },
        { id: 'b', version: 1 },
        { id: 'z', version: 8 },
      ],
    };
    const merged = keepNewerRecords(cached, answer) as typeof answer;
    expect(merged.data[0]).toBe(answer.data[0]);
    expect(merged.data[1]).toBe(answer.data[1]);
    expect(merged.data[2]).toBe(cached.data[2]);
  });

  it('answers the new list itself when nothing in the cache is newer', () => {
    const answer = { data: [{ id: 'a', version: 2 }] };
    expect(keepNewerRecords({ data: [{ id: 'a', version: 1 }] }, answer)).toBe(answer);
    expect(keepNewerRecords(undefined, answer)).toBe(answer);
  });
});
