import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { operations } from '@/generated/api';
import { renderWithProviders } from '@/resources/form/test-utils';
import { NotificationModals } from './notification-modals';
import { StatusBar } from './status-bar';
import {
  clearUserNotifications,
  flattenNotifications,
  loadStatusBar,
  queueNotifications,
  showTriggeredNotifications,
} from './user-notifications';

afterEach(() => {
  cleanup();
  act(() => clearUserNotifications());
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function answering(status: number, body: unknown) {
  const fetchMock = vi.fn<typeof fetch>(
    async () =>
      new Response(JSON.stringify(body), {
        status,
        headers: { 'Content-Type': 'application/json' },
      }),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('user notifications', () => {
  it('flattens the answer in order and falls back to the group template', () => {
    const shown = flattenNotifications(
      {
        notifications: {
          '2': {
            custom: {
              force_accept: true,
              template: { title: 'Template title', body: '<p>Template body</p>', footer: null },
              notifications: [{ id: 'n2' }],
            },
          },
          '1': {
            bastion: {
              notifications: [{ id: 'n1', title: 'Own title', body: '<p>Own body</p>' }],
            },
          },
        },
      },
      'modal',
    );
    expect(shown.map((n) => [n.key, n.title, n.body, n.forceAccept])).toEqual([
      ['1:bastion:n1', 'Own title', '<p>Own body</p>', false],
      ['2:custom:n2', 'Template title', '<p>Template body</p>', true],
    ]);
    expect(flattenNotifications(null, 'modal')).toEqual([]);
  });

  it('shows one at a time; one that must be accepted closes only with Accept', () => {
    renderWithProviders(<NotificationModals />);
    act(() =>
      queueNotifications([
        {
          key: 'a',
          display: 'modal',
          title: 'Maintenance',
          body: '<p>Tonight <strong>22:00</strong></p><script>window.hacked = true</script>',
          footer: '<a href="javascript:alert(1)">x</a>',
          forceAccept: true,
        },
        {
          key: 'b',
          display: 'fullpage',
          title: 'Welcome',
          body: '',
          footer: '',
          forceAccept: false,
        },
      ]),
    );
    const first = screen.getByTestId('notification-modal');
    expect(screen.getByRole('dialog', { name: 'Maintenance' })).toBeInTheDocument();
    expect(first).toHaveAttribute('data-forced', 'true');
    expect(screen.getByTestId('notification-body').innerHTML).toBe(
      '<p>Tonight <strong>22:00</strong></p>',
    );
    expect(screen.getByTestId('notification-footer').querySelector('a')).not.toHaveAttribute(
      'href',
    );
    expect(screen.queryByRole('button', { name: /close/i })).toBeNull();
    fireEvent.keyDown(first, { key: 'Escape' });
    expect(screen.getByRole('dialog', { name: 'Maintenance' })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Accept' }));
    const second = screen.getByTestId('notification-modal');
    expect(second).toHaveAttribute('data-display', 'fullpage');
    expect(screen.getByRole('dialog', { name: 'Welcome' })).toBeInTheDocument();
    fireEvent.click(screen.getByTestId('notification-accept'));
    expect(screen.queryByTestId('notification-modal')).toBeNull();
  });

  it('shows the status bar in its level until it is dismissed', async () => {
    answering(200, { text: 'Accounts move to the new portal on Monday', level: 'warning' });
    renderWithProviders(<StatusBar />);
    expect(screen.queryByTestId('status-bar')).toBeNull();
    await act(() => loadStatusBar());
    const bar = screen.getByTestId('status-bar');
    expect(bar).toHaveTextContent('Accounts move to the new portal on Monday');
    expect(bar).toHaveAttribute('data-level', 'warning');
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('status-bar')).toBeNull();
  });

  it('shows no bar for a null answer and only logs a failure', async () => {
    answering(200, null);
    renderWithProviders(<StatusBar />);
    await act(() => loadStatusBar());
    expect(screen.queryByTestId('status-bar')).toBeNull();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    answering(404, { error: 'not_found', description_code: 'not_found' });
    await act(() => loadStatusBar());
    expect(warn).toHaveBeenCalled();
    expect(screen.queryByTestId('status-bar')).toBeNull();
  });

  it('asks nothing while the notifications call is planned', async () => {
    const fetchMock = answering(200, { notifications: {} });
    await showTriggeredNotifications('login', ['modal', 'fullpage']);
    expect(fetchMock).toHaveBeenCalledTimes(operations['notifications.user'].planned ? 0 : 2);
  });
});
