/**
 * The lost live event: a desktop card stayed "creating" while the server had finished. A list read
 * answers what the server read before a later write; the event of that write reached the client
 * while the read was in flight, when the list had no data for it to patch (the first read of the
 * list) or before an answer that does not have the record yet (a refetch racing a create). The
 * answer then landed as the truth and no later event came. And the card that vanished: a desktop
 * card shown (its add applied), then a read began and answered a list older than that add (a
 * node's cached list), which replaced the list without the card. Each test reads the list through
 * the data provider and the query cache the application uses.
 */
import { describe, expect, it } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import { wireByName } from '@/generated/events';
import { createDataProvider } from './data-provider';
import { createLiveProvider, keepNewerRecords, listKeyPrefix } from './live-provider';

interface Row {
  id: string;
  state: string;
  version: number;
  name?: string;
}

const key = [...listKeyPrefix('desktops'), { filters: [] }];

function setup() {
  const client = new QueryClient();
  client.setQueryDefaults(listKeyPrefix('desktops'), { structuralSharing: keepNewerRecords });
  const live = createLiveProvider(client);
  let answer: (rows: Row[]) => void = () => undefined;
  const provider = createDataProvider(
    () =>
      new Promise((resolve) => {
        answer = resolve;
      }),
    live,
  );
  /** Starts a list read (of a part of the list, with `meta`); `answer` ends it. */
  const read = (meta?: Record<string, unknown>) =>
    client.fetchQuery({
      queryKey: key,
      queryFn: () => provider.getList({ resource: 'desktops', ...(meta ? { meta } : {}) }),
      staleTime: 0,
    });
  const rows = () => (client.getQueryData(key) as { data: Row[] } | undefined)?.data ?? [];
  return { client, live, read, rows, answer: (list: Row[]) => answer(list) };
}

const whole = (id: string, state: string, version: number) => ({
  id,
  name: `Desktop ${id}`,
  image: '1',
  state,
  type: 'persistent',
  viewers: ['browser-vnc'],
  accessed: 1,
  version,
});

describe('a live event that arrives while the list is read', () => {
  it('is applied to the first answer of the list (the card does not stay creating)', async () => {
    const { live, read, rows, answer } = setup();
    const reading = read();
    // The disk is ready: the server publishes the update while the first list read is in flight.
    live.dispatch(wireByName['desktops.updated'], whole('x', 'stopped', 2));
    // The answer was read before that write.
    answer([whole('x', 'creating', 1)]);
    await reading;
    expect(rows()).toEqual([whole('x', 'stopped', 2)]);
  });

  it('keeps a desktop created while a refetch that does not have it yet is in flight', async () => {
    const { client, live, read, rows, answer } = setup();
    client.setQueryData(key, { data: [whole('a', 'stopped', 3)], total: 1 });
    const reading = read();
    live.dispatch(wireByName['desktops.created'], whole('x', 'creating', 1));
    live.dispatch(wireByName['desktops.updated'], whole('x', 'stopped', 2));
    answer([whole('a', 'stopped', 3)]);
    await reading;
    expect(rows()).toEqual([whole('a', 'stopped', 3), whole('x', 'stopped', 2)]);
  });

  it('removes a desktop deleted during the read and keeps an older event out', async () => {
    const { live, read, rows, answer } = setup();
    const reading = read();
    live.dispatch(wireByName['desktops.deleted'], { id: 'gone', version: 5 });
    live.dispatch(wireByName['desktops.updated'], whole('x', 'creating', 1));
    answer([whole('gone', 'stopped', 4), whole('x', 'stopped', 2)]);
    await reading;
    expect(rows()).toEqual([whole('x', 'stopped', 2)]);
  });

  it('forgets the events once no read is in flight', async () => {
    const { live, read, rows, answer } = setup();
    const first = read();
    live.dispatch(wireByName['desktops.updated'], whole('x', 'stopped', 2));
    answer([whole('x', 'creating', 1)]);
    await first;
    // A later read answers what the server holds then: the old event is not replayed on it.
    const second = read();
    answer([]);
    await second;
    expect(rows()).toEqual([]);
  });
});

describe('a list answer older than events applied before its read began', () => {
  it('keeps a desktop whose add arrived before the read, and drops one deleted before it', async () => {
    const { client, live, read, rows, answer } = setup();
    client.setQueryData(key, { data: [whole('a', 'stopped', 3), whole('b', 'stopped', 1)] });
    // The card of a new desktop is shown, and another desktop is deleted...
    live.dispatch(wireByName['desktops.created'], whole('x', 'creating', 1));
    live.dispatch(wireByName['desktops.updated'], whole('x', 'stopped', 2));
    live.dispatch(wireByName['desktops.deleted'], { id: 'b', version: 1 });
    expect(rows().map((r) => r.id)).toEqual(['a', 'x']);
    // ...then a read answers a list the server read before both writes (a cached list of a node
    // that had not heard of them yet): the answer does not undo what the events said.
    const reading = read();
    answer([whole('a', 'stopped', 3), whole('b', 'stopped', 1)]);
    await reading;
    expect(rows()).toEqual([whole('a', 'stopped', 3), whole('x', 'stopped', 2)]);
  });

  it('leaves a part of the list (a tab of another operation) as its answer says', async () => {
    const { client, live, read, rows, answer } = setup();
    client.setQueryData(key, { data: [whole('a', 'stopped', 3)] });
    live.dispatch(wireByName['desktops.created'], whole('x', 'creating', 1));
    const reading = read({ operation: 'list', query: { shared: 'true' } });
    answer([whole('a', 'stopped', 3)]);
    await reading;
    expect(rows()).toEqual([whole('a', 'stopped', 3)]);
  });

  it('takes the answer as it is after a reconnect (events may have been missed meanwhile)', async () => {
    const { client, live, read, rows, answer } = setup();
    client.setQueryData(key, { data: [whole('a', 'stopped', 3)] });
    live.dispatch(wireByName['desktops.created'], whole('x', 'creating', 1));
    live.resync();
    const reading = read();
    answer([whole('a', 'stopped', 3)]);
    await reading;
    expect(rows()).toEqual([whole('a', 'stopped', 3)]);
  });
});

/** A data provider whose requests wait until the test answers them, in the order they were made. */
function queuedSetup() {
  const client = new QueryClient();
  const live = createLiveProvider(client);
  const waiting: ((answer: unknown) => void)[] = [];
  const provider = createDataProvider(
    () =>
      new Promise((resolve) => {
        waiting.push(resolve);
      }),
    live,
  );
  const answerNext = (answer: unknown) => waiting.shift()?.(answer);
  return { live, provider, answerNext };
}

describe('reads that overlap', () => {
  it('two list reads begun together each get an event that arrives after the other ended', async () => {
    const { live, provider, answerNext } = queuedSetup();
    const first = provider.getList({ resource: 'desktops' });
    const second = provider.getList({ resource: 'desktops', meta: { query: { page: '1' } } });
    answerNext([whole('x', 'creating', 1)]);
    await first;
    // The second read, begun at the same moment, is still in flight when the update comes.
    live.dispatch(wireByName['desktops.updated'], whole('x', 'stopped', 2));
    answerNext([whole('x', 'creating', 1)]);
    expect((await second).data).toEqual([whole('x', 'stopped', 2)]);
  });
});

describe("a deployment's page read while its desktops change", () => {
  const desktop = (id: string, state: string, version: number) => ({
    id,
    tag: 'dep-1',
    user_name: `Student ${id}`,
    state,
    version,
  });
  const detail = (...desktops: ReturnType<typeof desktop>[]) => ({
    id: 'dep-1',
    name: 'Lab',
    desktops,
  });

  it('gets the desktop events that arrived while it was read (the row does not stay shutting down)', async () => {
    const { live, provider, answerNext } = queuedSetup();
    const reading = provider.getOne({ resource: 'deployments', id: 'dep-1' });
    // The server stops the desktop after it read the deployment for this answer.
    live.dispatch(wireByName['deployment-desktops.updated'], desktop('a', 'stopped', 38));
    // An event of another deployment, and an older one, change nothing.
    live.dispatch(wireByName['deployment-desktops.updated'], {
      ...desktop('z', 'stopped', 9),
      tag: 'dep-2',
    });
    live.dispatch(wireByName['deployment-desktops.updated'], desktop('b', 'started', 3));
    live.dispatch(wireByName['deployment-desktops.deleted'], { id: 'c', tag: 'dep-1' });
    answerNext(
      detail(
        desktop('a', 'shutting-down', 37),
        desktop('b', 'stopped', 4),
        desktop('c', 'stopped', 2),
      ),
    );
    const { data } = await reading;
    expect(data).toEqual(detail(desktop('a', 'stopped', 38), desktop('b', 'stopped', 4)));
  });

  it('answers as read when no event came, and forgets the events once the read ended', async () => {
    const { live, provider, answerNext } = queuedSetup();
    const first = provider.getOne({ resource: 'deployments', id: 'dep-1' });
    answerNext(detail(desktop('a', 'started', 5)));
    expect((await first).data).toEqual(detail(desktop('a', 'started', 5)));
    live.dispatch(wireByName['deployment-desktops.updated'], desktop('a', 'stopped', 6));
    const second = provider.getOne({ resource: 'deployments', id: 'dep-1' });
    answerNext(detail(desktop('a', 'stopped', 6)));
    expect((await second).data).toEqual(detail(desktop('a', 'stopped', 6)));
  });
});

describe('an open record read while it changes', () => {
  it('gets the updates of a patched resource that arrived while it was read, not older ones', async () => {
    const { live, provider, answerNext } = queuedSetup();
    const reading = provider.getOne({ resource: 'bastion', id: 'd1' });
    live.dispatch(wireByName['bastion.updated'], { id: 'd1', enabled: true, version: 3 });
    live.dispatch(wireByName['bastion.updated'], { id: 'd1', enabled: false, version: 1 });
    live.dispatch(wireByName['bastion.updated'], { id: 'd2', enabled: false, version: 9 });
    answerNext({ id: 'd1', host: 'bastion.example.org', enabled: false, version: 2 });
    expect((await reading).data).toEqual({
      id: 'd1',
      host: 'bastion.example.org',
      enabled: true,
      version: 3,
    });
  });
});
