/**
 * A list whose tab holds nothing says the tab is empty; "nothing matches the filter" is for a
 * search or a toggle of the user's.
 */
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { UserConfig } from '@/generated/types';
import { previewQuery } from '@/lib/list-preview';
import { updateSessionState } from '@/lib/session-state';
import { wireByName } from '@/generated/events';
import { prefetchOperation } from '@/providers/http-client';
import { createLiveProvider } from '@/providers/live-provider';
import { registerActionHandler } from '../actions/action-registry';
import { registerCard } from '../cards/card-registry';
import { renderEngine, stubLayout } from '../testing/engine-test-wrapper';
import { ResourceListPage } from './resource-list-page';

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
  // The application registers the desktops' card and Open action; these draw the name only.
  registerCard('desktopCard', ({ record }) => (
    <div data-record-id={String(record.id)}>{String(record.name)}</div>
  ));
  registerActionHandler('openDesktop', () => null);
});
afterAll(() => restoreLayout());
afterEach(() => {
  cleanup();
  localStorage.clear();
  vi.unstubAllGlobals();
});

const desktop = {
  id: 'd1',
  name: 'Lab desktop',
  type: 'persistent',
  state: 'stopped',
  template: 'demo-template',
};

/** Every request of the page (its first records') answers `records`. */
function answerFirstRecords(records: readonly object[]): void {
  vi.stubGlobal(
    'fetch',
    vi.fn(
      async () =>
        new Response(JSON.stringify(records), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        }),
    ),
  );
}

describe('the list page', () => {
  it('says an empty tab is empty, not that a filter matches nothing', async () => {
    renderEngine(<ResourceListPage resource="desktops" />, {
      url: '/desktops',
      records: { desktops: [desktop] },
    });
    act(() => updateSessionState({ config: { show_temporal_tab: true } as UserConfig }));
    fireEvent.click(await screen.findByTestId('tab-temporary'));
    expect(await screen.findByTestId('tab-empty')).toHaveTextContent(
      'Nothing under “Temporary” yet.',
    );
    expect(screen.queryByTestId('no-matches')).toBeNull();
  });

  it('draws the first desktops while the whole list loads, then the whole list', async () => {
    const first = { ...desktop, id: 'd0', name: 'Alpha desktop' };
    const asked: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: RequestInfo | URL) => {
        asked.push(String(input));
        return new Response(JSON.stringify([first]), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      }),
    );
    let answer: (records: (typeof desktop)[]) => void = () => undefined;
    const whole = new Promise<(typeof desktop)[]>((resolve) => (answer = resolve));
    renderEngine(<ResourceListPage resource="desktops" />, {
      url: '/desktops',
      records: { desktops: whole },
    });
    // the first records come from the list operation's limit, before the whole list answers
    expect(await screen.findByText('Alpha desktop')).toBeInTheDocument();
    expect(asked).toEqual([expect.stringMatching(/\/user\/desktops\?limit=24$/)]);
    expect(screen.queryByText('Lab desktop')).toBeNull();
    // a filter of the user's over some records would say "no matches": the skeleton instead
    fireEvent.change(screen.getByRole('textbox', { name: 'Filter' }), {
      target: { value: 'lab' },
    });
    expect(await screen.findByTestId('list-loading')).toBeInTheDocument();
    expect(screen.queryByTestId('no-matches')).toBeNull();
    await act(async () => answer([first, desktop]));
    expect(await screen.findByText('Lab desktop')).toBeInTheDocument();
    expect(screen.queryByText('Alpha desktop')).toBeNull();
  });

  it('draws the first desktops answered ahead in its first render, without the skeleton', async () => {
    const first = { ...desktop, id: 'd0', name: 'Alpha desktop' };
    answerFirstRecords([first]);
    // the sign-in asked for them ahead, and they have come
    await prefetchOperation('desktops.list', { params: {}, query: previewQuery(24) });
    renderEngine(<ResourceListPage resource="desktops" />, {
      url: '/desktops',
      records: { desktops: new Promise<(typeof desktop)[]>(() => undefined) },
    });
    expect(screen.getByText('Alpha desktop')).toBeInTheDocument();
    expect(screen.queryByTestId('list-loading')).toBeNull();
  });

  it('shows a change to the first desktops while the whole list still loads', async () => {
    const first = { ...desktop, id: 'd0', name: 'Alpha desktop', version: 1 };
    answerFirstRecords([first]);
    const { queryClient } = renderEngine(<ResourceListPage resource="desktops" />, {
      url: '/desktops',
      records: { desktops: new Promise<(typeof desktop)[]>(() => undefined) },
    });
    expect(await screen.findByText('Alpha desktop')).toBeInTheDocument();
    const live = createLiveProvider(queryClient, { batch: 'sync' });
    act(() =>
      live.dispatch(wireByName['desktops.updated'], { ...first, name: 'Renamed', version: 2 }),
    );
    expect(await screen.findByText('Renamed')).toBeInTheDocument();
    expect(screen.queryByText('Alpha desktop')).toBeNull();
  });
});
