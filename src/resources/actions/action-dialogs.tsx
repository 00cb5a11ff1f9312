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
}

let dialogs: readonly Dialog[] = [];
let nextKey = 1;
const listeners = new Set<() => void>();

function emit(): void {
  for (const listener of listeners) listener();
}

/** Mounts a dialog; resolves nothing, the dialog closes itself through `close`. */
export function openActionDialog(render: Render): void {
  const key = nextKey++;
  dialogs = [...dialogs, { key, render }];
  emit();
}

function closeDialog(key: number): void {
  dialogs = dialogs.filter((dialog) => dialog.key !== key);
  emit();
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
