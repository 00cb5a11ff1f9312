/**
 * Dialogs opened by actions, mounted outside the card, row or menu that opened them: a menu item
 * unmounts when its menu closes, and a dialog must outlive it. An action calls
 * `openActionDialog(render)`; the host (in the app layout) mounts what `render` returns until the
 * dialog calls its `close`, or until the page it was opened on is left (Back, a link): a dialog
 * belongs to its page.
 */
import { useEffect, useSyncExternalStore, type ReactNode } from 'react';
import { useLocation } from 'react-router';
import { focusAnchor, giveFocusBack, pressedControl } from './focus-after-action';

type Render = (close: () => void) => ReactNode;

interface Dialog {
  key: number;
  render: Render;
  /**
   * Gives the focus back once the dialog has closed: to its opener, or, when the opener is gone
   * (its menu closed, its record changed), to the control in its place in the same record.
   */
  giveBack: () => void;
  /** The path of the page it was opened on. */
  path: string;
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
  return pressedControl(active);
}

/** Mounts a dialog; resolves nothing, the dialog closes itself through `close`. */
export function openActionDialog(render: Render): void {
  const key = nextKey++;
  const anchor = focusAnchor(dialogOpener());
  const giveBack = () => giveFocusBack(anchor);
  dialogs = [...dialogs, { key, render, giveBack, path: window.location.pathname }];
  emit();
}

function closeDialog(key: number): void {
  const closing = dialogs.find((dialog) => dialog.key === key);
  dialogs = dialogs.filter((dialog) => dialog.key !== key);
  emit();
  // The dialog unmounts rather than closing, so the focus goes back here, not to the page body.
  if (closing) setTimeout(closing.giveBack, 0);
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
  const { pathname } = useLocation();
  useEffect(() => {
    for (const dialog of dialogs) if (dialog.path !== pathname) closeDialog(dialog.key);
  }, [pathname]);
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
