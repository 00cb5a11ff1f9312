/**
 * The table on a phone shows its key columns and one actions menu per row ("Actions for <name>",
 * opened and walked with the keyboard); on a wide screen it shows every column, and a resource
 * whose records offer no action has no actions column at all.
 */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '@/generated/types';
import { registerActionHandler } from '../actions/action-registry';
import { renderEngine, stubLayout } from '../testing/engine-test-wrapper';
import { keyColumns, tableColumns } from './list-columns';
import type { ListRecord } from './list-filter';
import { ResourceTable } from './resource-table';

// Another feature draws the desktops' Open; a stand-in shows where the row puts it.
registerActionHandler('openDesktop', ({ variant }) => (
  <button type="button" role={variant === 'menuItem' ? 'menuitem' : undefined}>
    Open
  </button>
));
registerActionHandler('directLinkModal', () => null);
registerActionHandler('bastionModal', () => null);

const realMatchMedia = window.matchMedia;

/** The window as wide as a phone (every `max-width` query matches) or not. */
function screenWidth(phone: boolean): void {
  window.matchMedia = ((query: string) => ({
    matches: phone && query.includes('max-width'),
    media: query,
    onchange: null,
    addListener: () => undefined,
    removeListener: () => undefined,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    dispatchEvent: () => false,
  })) as typeof window.matchMedia;
}

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => {
  restoreLayout();
  window.matchMedia = realMatchMedia;
});
afterEach(() => cleanup());

const desktops: ListRecord[] = [
  { id: 'd1', name: 'Lab desktop', state: 'stopped', type: 'persistent', description: 'Lab' },
  { id: 'd2', name: 'Office desktop', state: 'started', type: 'persistent', description: 'Office' },
];

function table(resource: string, records: readonly ListRecord[], role: Role) {
  return renderEngine(
    <ResourceTable
      resource={resource}
      records={records}
      columns={tableColumns(resource, role)}
      keyColumns={keyColumns(resource, role)}
      label="Records"
      sort={null}
      onSort={() => undefined}
      detailsHref={null}
      titleField="name"
    />,
    { role },
  );
}

const headers = () =>
  screen.getAllByRole('columnheader').map((th) => th.getAttribute('data-field') ?? 'actions');

describe('key columns', () => {
  it('are the title column and the first state column unless the schema names them', () => {
    expect(keyColumns('desktops', 'user').map((m) => m.path)).toEqual(['name', 'state']);
    expect(keyColumns('adminUsers', 'admin').map((m) => m.path)).toEqual(['username', 'active']);
    expect(keyColumns('templates', 'admin').map((m) => m.path)).toEqual(['name', 'enabled']);
    expect(keyColumns('audit', 'admin').map((m) => m.path)).toEqual(['at', 'action']);
  });
});

describe('the table on a phone', () => {
  it('shows only the key columns and one actions menu per row', () => {
    screenWidth(true);
    table('desktops', desktops, 'user');
    expect(headers()).toEqual(['name', 'state', 'actions']);
    const row = screen.getAllByTestId('record')[0] as HTMLElement;
    const buttons = within(row).getAllByRole('button');
    expect(buttons.map((button) => button.getAttribute('aria-label'))).toEqual([
      'Actions for Lab desktop',
    ]);
  });

  it('opens the row menu from the keyboard and walks its items', async () => {
    screenWidth(true);
    table('desktops', desktops, 'user');
    const trigger = screen.getByRole('button', { name: 'Actions for Lab desktop' });
    trigger.focus();
    // A keyboard press of a button is its click.
    act(() => fireEvent.click(trigger));
    const menu = await screen.findByRole('menu');
    // jsdom lays nothing out, so the floating menu counts as detached and stays display: none.
    const items = within(menu).getAllByRole('menuitem', { hidden: true });
    expect(items.map((item) => item.textContent)).toEqual(
      expect.arrayContaining(['Open', 'Start', 'Edit']),
    );
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Actions for Lab desktop' })).toHaveAttribute(
        'aria-expanded',
        'true',
      ),
    );
    fireEvent.keyDown(menu, { key: 'ArrowDown' });
    await waitFor(() => expect(menu).toContainElement(document.activeElement as HTMLElement));
    fireEvent.keyDown(document.activeElement as HTMLElement, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('menu')).toBeNull());
  });
});

describe('the table on a wide screen', () => {
  it('shows every column and the actions as buttons', () => {
    screenWidth(false);
    table('desktops', desktops, 'user');
    expect(headers()).toEqual([...tableColumns('desktops', 'user').map((m) => m.path), 'actions']);
    expect(headers().length).toBeGreaterThan(3);
    const row = screen.getAllByTestId('record')[1] as HTMLElement;
    expect(within(row).getByRole('button', { name: 'Stop' })).toBeInTheDocument();
  });

  it('has no actions column when no record offers an action', () => {
    screenWidth(false);
    table(
      'audit',
      [{ id: 'a1', at: '2026-11-28 10:00:00', action: 'adminUsers.update', actor_name: 'Ann' }],
      'admin',
    );
    expect(headers()).toEqual(tableColumns('audit', 'admin').map((m) => m.path));
    expect(screen.getByTestId('record').querySelectorAll('td')).toHaveLength(headers().length);
  });
});
