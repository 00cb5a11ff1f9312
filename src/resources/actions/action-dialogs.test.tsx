/**
 * Action dialogs take the focus when they open and give it back to what opened them when they
 * close: the button, or the button of the menu whose item opened it.
 */
import { MantineProvider, Modal } from '@mantine/core';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { MemoryRouter, useNavigate } from 'react-router';
import { ActionDialogHost, dialogOpener, openActionDialog } from './action-dialogs';

function openDialog() {
  openActionDialog((close) => (
    <Modal opened onClose={close} title="Rename" transitionProps={{ duration: 0 }}>
      <input aria-label="Name" />
      <button type="button" onClick={close}>
        Done
      </button>
    </Modal>
  ));
}

describe('action dialog focus', () => {
  it('moves the focus into the dialog and back to the opener on close', async () => {
    render(
      <MemoryRouter>
        <MantineProvider>
          <button type="button" onClick={openDialog}>
            Open
          </button>
          <ActionDialogHost />
        </MantineProvider>
      </MemoryRouter>,
    );
    const opener = screen.getByRole('button', { name: 'Open' });
    opener.focus();
    fireEvent.click(opener);
    const dialog = await screen.findByRole('dialog');
    await waitFor(() => expect(dialog).toContainElement(document.activeElement as HTMLElement));
    act(() => fireEvent.click(screen.getByRole('button', { name: 'Done' })));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(opener));
  });

  it('closes a dialog when its page is left (Back, a link)', async () => {
    function Leave() {
      const navigate = useNavigate();
      return (
        <button type="button" onClick={() => void navigate('/elsewhere')}>
          Leave
        </button>
      );
    }
    render(
      <MemoryRouter initialEntries={['/profile/changePassword']}>
        <MantineProvider>
          <Leave />
          <ActionDialogHost />
        </MantineProvider>
      </MemoryRouter>,
    );
    // The browser's address is the page's (as under the app's BrowserRouter).
    window.history.replaceState(null, '', '/profile/changePassword');
    act(() => openDialog());
    expect(await screen.findByRole('dialog')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Leave' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('returns to the menu button when a menu item opened the dialog', () => {
    document.body.innerHTML = `
      <button aria-controls="menu-1">More</button>
      <div role="menu" id="menu-1"><button role="menuitem">Rename</button></div>`;
    const item = document.querySelector<HTMLElement>('[role="menuitem"]');
    expect(dialogOpener(item)).toBe(document.querySelector('[aria-controls="menu-1"]'));
    expect(dialogOpener(document.body)).toBeNull();
    document.body.innerHTML = '';
  });
});
