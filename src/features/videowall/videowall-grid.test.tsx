import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient } from '@tanstack/react-query';
import { Refine, type DataProvider } from '@refinedev/core';
import routerProvider from '@refinedev/react-router';
import { MemoryRouter, Route, Routes, useParams } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { wireByName } from '@/generated/events';
import type { DeploymentDesktop, DeploymentDetail } from '@/generated/types';
import { createLiveProvider } from '@/providers/live-provider';
import { Providers } from '@/resources/form/test-utils';
import { ThumbnailScheduler } from './thumbnail-scheduler';
import { useDeploymentWall } from './use-deployment-wall';
import { VideowallGrid } from './videowall-grid';
import { VideowallPage } from './videowall-page';

vi.mock('./wall-console', () => ({
  WallConsole: ({ desktopId }: { desktopId: string }) => (
    <div data-testid="console-stub" data-desktop-id={desktopId} />
  ),
}));

const DEPLOYMENT = 'dep-1';

const desktopOf = (n: number, state = n % 3 === 0 ? 'stopped' : 'started'): DeploymentDesktop =>
  ({
    id: `d-${String(n).padStart(2, '0')}`,
    name: 'Maths desktop',
    user: `u-${n}`,
    user_name: `Student ${String(n).padStart(2, '0')}`,
    state,
    tag: DEPLOYMENT,
    viewers: ['browser-vnc'],
    version: 1,
  }) as DeploymentDesktop;

const detailOf = (count: number): DeploymentDetail => ({
  id: DEPLOYMENT,
  name: 'Maths',
  desktops: Array.from({ length: count }, (_, i) => desktopOf(i + 1)),
});

function setup(detail: DeploymentDetail) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const live = createLiveProvider(queryClient, { batch: 'sync' });
  const dataProvider: DataProvider = {
    getApiUrl: () => '/api/v3',
    getList: async () => ({ data: [], total: 0 }),
    getOne: async () => ({ data: detail as never }),
    create: async () => ({ data: {} as never }),
    update: async () => ({ data: {} as never }),
    deleteOne: async () => ({ data: {} as never }),
  };
  return { queryClient, live, dataProvider };
}

function renderWith(element: React.ReactElement, detail: DeploymentDetail) {
  const { queryClient, live, dataProvider } = setup(detail);
  render(
    <Providers>
      <MemoryRouter initialEntries={[`/deployment/${DEPLOYMENT}/videowall`]}>
        <Refine
          routerProvider={routerProvider}
          dataProvider={dataProvider}
          liveProvider={live}
          resources={[{ name: 'deployments' }, { name: 'deployment-desktops' }]}
          options={{
            disableTelemetry: true,
            liveMode: 'manual',
            reactQuery: { clientConfig: queryClient },
          }}
        >
          <Routes>
            <Route path="/deployment/:id/videowall" element={element} />
          </Routes>
        </Refine>
      </MemoryRouter>
    </Providers>,
  );
  return { live };
}

/** The grid over the real data hook, counting each tile's renders. */
function Harness({
  scheduler,
  onOpen,
  onTileRender,
}: {
  scheduler: ThumbnailScheduler;
  onOpen: (id: string) => void;
  onTileRender: (id: string) => void;
}) {
  const { id = '' } = useParams();
  const { detail } = useDeploymentWall(id);
  if (!detail) return null;
  return (
    <VideowallGrid
      desktops={detail.desktops}
      scheduler={scheduler}
      thumbnails
      onOpen={onOpen}
      onTileRender={onTileRender}
    />
  );
}

const fetchMock = vi.fn<typeof fetch>();

beforeEach(() => {
  // Thumbnails of the page test: the desktop has no screenshot yet.
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async () => new Response('{}', { status: 404 }));
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
});

describe('videowall grid', () => {
  it('renders one tile per desktop, and a live update of one desktop re-renders only its tile', async () => {
    const renders = new Map<string, number>();
    const onTileRender = (id: string) => renders.set(id, (renders.get(id) ?? 0) + 1);
    const scheduler = new ThumbnailScheduler({ fetch: async () => null });
    const onOpen = vi.fn();
    const { live } = renderWith(
      <Harness scheduler={scheduler} onOpen={onOpen} onTileRender={onTileRender} />,
      detailOf(30),
    );
    await waitFor(() => expect(screen.getAllByTestId('videowall-tile')).toHaveLength(30));
    expect(screen.getAllByTestId('videowall-placeholder')).toHaveLength(10);
    const before = new Map(renders);

    act(() => {
      live.dispatch(wireByName['deployment-desktops.updated'], {
        ...desktopOf(2),
        state: 'stopped',
        version: 2,
      });
    });
    const tile = () =>
      screen
        .getAllByTestId('videowall-tile')
        .find((el) => el.getAttribute('data-desktop-id') === 'd-02');
    await waitFor(() => expect(tile()).toHaveAttribute('data-state', 'stopped'));

    const rerendered = [...renders].filter(([id, n]) => n !== before.get(id)).map(([id]) => id);
    expect(rerendered).toEqual(['d-02']);

    // A stale event (older version) and another deployment's desktop change nothing.
    act(() => {
      live.dispatch(wireByName['deployment-desktops.updated'], { ...desktopOf(2), version: 1 });
      live.dispatch(wireByName['deployment-desktops.created'], {
        ...desktopOf(99),
        tag: 'other',
      });
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(tile()).toHaveAttribute('data-state', 'stopped');
    expect(screen.getAllByTestId('videowall-tile')).toHaveLength(30);

    // Added and deleted desktops of this deployment.
    act(() => {
      live.dispatch(wireByName['deployment-desktops.created'], desktopOf(31));
    });
    await waitFor(() => expect(screen.getAllByTestId('videowall-tile')).toHaveLength(31));
    act(() => {
      live.dispatch(wireByName['deployment-desktops.deleted'], { id: 'd-05', tag: DEPLOYMENT });
    });
    await waitFor(() => expect(screen.getAllByTestId('videowall-tile')).toHaveLength(30));
    scheduler.dispose();
  });

  it('makes tiles buttons named by user and state, operable with Enter and Space', async () => {
    const scheduler = new ThumbnailScheduler({ fetch: async () => null });
    const onOpen = vi.fn();
    renderWith(
      <Harness scheduler={scheduler} onOpen={onOpen} onTileRender={() => undefined} />,
      detailOf(3),
    );
    const started = await screen.findByRole('button', {
      name: 'Student 01, Started: open the console',
    });
    expect(started.tagName).toBe('BUTTON');
    started.focus();
    expect(started).toHaveFocus();
    // Native buttons turn Enter and Space into clicks; jsdom does not, so the click is what is sent.
    fireEvent.keyDown(started, { key: 'Enter' });
    fireEvent.click(started);
    expect(onOpen).toHaveBeenCalledWith('d-01');
    const stopped = screen.getByRole('button', { name: 'Student 03, Stopped: no screen to show' });
    expect(stopped).toHaveAttribute('aria-disabled', 'true');
    fireEvent.click(stopped);
    expect(onOpen).toHaveBeenCalledTimes(1);
    scheduler.dispose();
  });
});

describe('videowall page', () => {
  it('shows the toolbar counts and opens one console from the keyboard', async () => {
    renderWith(<VideowallPage />, detailOf(12));
    expect(await screen.findByRole('heading', { name: 'Maths' })).toBeInTheDocument();
    expect(screen.getByTestId('videowall-counts')).toHaveTextContent('8 / 12 started');
    expect(screen.getByRole('switch', { name: 'Thumbnails' })).toBeChecked();
    expect(screen.getByRole('link', { name: 'Deployment' })).toHaveAttribute(
      'href',
      `/deployment/${DEPLOYMENT}`,
    );

    const tile = screen.getByRole('button', { name: 'Student 02, Started: open the console' });
    fireEvent.click(tile);
    const dialog = await screen.findByRole('dialog', { name: 'Console of Student 02' });
    expect(await within(dialog).findByTestId('console-stub')).toHaveAttribute(
      'data-desktop-id',
      'd-02',
    );
    fireEvent.click(within(dialog).getByRole('button', { name: 'Close the console' }));
    await waitFor(() => expect(screen.queryByTestId('console-stub')).not.toBeInTheDocument());
  });
});
