/**
 * Dialogs opened by actions, mounted outside the card, row or menu that opened them: a menu item
 * unmounts when its menu closes, and a dialog must outlive it. An action calls
 * `openActionDialog(render)`; the host (in the app layout) mounts what `render` returns until the
 * dialog calls its `close`.
 */
import { useSyncExternalStore, type ReactNode } from 'react';

type Render = (close: () => void) => ReactNode;

interface Dialog {
  key: number;
  render: Render;
  /** Where the focus goes back to once the dialog closes. */
  returnTo: HTMLElement | null;
}

let dialogs: readonly Dialog[] = [];
let nextKey = 1;
const listeners = new Set<() => void>();

function emit(): void {
  for (const listener of listeners) listener();
}

/**
 * The element that opened a dialog, to take the focus back when it closes: the focused element,
 * or, for an item of a menu (which unmounts with its menu), the button that opened the menu.
 */
export function dialogOpener(active: Element | null = document.activeElement): HTMLElement | null {
  if (!(active instanceof HTMLElement) || active === document.body) return null;
  const menu = active.closest<HTMLElement>('[role="menu"]');
  if (menu?.id) {
    const target = document.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(menu.id)}"]`);
    if (target) return target;
  }
  return active;
}

/** Mounts a dialog; resolves nothing, the dialog closes itself through `close`. */
export function openActionDialog(render: Render): void {
  const key = nextKey++;
  dialogs = [...dialogs, { key, render, returnTo: dialogOpener() }];
  emit();
}

function closeDialog(key: number): void {
  const closing = dialogs.find((dialog) => dialog.key === key);
  dialogs = dialogs.filter((dialog) => dialog.key !== key);
  emit();
  // The dialog unmounts rather than closing, so the focus goes back here, not to the page body.
  const returnTo = closing?.returnTo;
  if (returnTo)
    setTimeout(() => {
      if (returnTo.isConnected) returnTo.focus();
    }, 0);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Where action dialogs live: render once, near the root of the signed-in layout. */
export function ActionDialogHost() {
  const open = useSyncExternalStore(
    subscribe,
    () => dialogs,
    () => dialogs,
  );
  return (
    <>
      {open.map((dialog) => (
        <DialogSlot key={dialog.key} dialog={dialog} />
      ))}
    </>
  );
}

function DialogSlot({ dialog }: { dialog: Dialog }) {
  return <>{dialog.render(() => closeDialog(dialog.key))}</>;
}
