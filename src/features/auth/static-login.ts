/**
 * The hand-over from the login form drawn at build time (`app/login-prerender.tsx`) to the live one:
 * what was typed (and where the caret was) moves into the live form's inputs, the drawn form goes,
 * and a login already sent from it (held by `static-login-boot.ts`) is sent again from the live
 * form. Runs in the commit that first draws the live form, so no frame shows both or neither.
 */
import { STATIC_LOGIN_ID } from '@common/prerendered-login';

/** Sets an input's value the way typing does, so that React's change handler sees it. */
function typeInto(input: HTMLInputElement, value: string): void {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

/** Chooses a select's option the way a person does, so that React's change handler sees it. */
function chooseIn(select: HTMLSelectElement, value: string): void {
  Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value')?.set?.call(select, value);
  select.dispatchEvent(new Event('change', { bubbles: true }));
}

/**
 * The categories the drawn form offers (the server filled them in), for the live form to draw the
 * same choice at once; empty when the page has no drawn form or it offers no choice.
 */
export function drawnCategories(): { id: string; name: string }[] {
  const select = document
    .getElementById(STATIC_LOGIN_ID)
    ?.querySelector<HTMLSelectElement>('select[name="category"]');
  return [...(select?.options ?? [])].map((option) => ({
    id: option.value,
    name: option.text,
  }));
}

/**
 * Takes the drawn form over into `form` (the live form, null when the page shows no form) and
 * removes it; nothing happens when the page has no drawn form.
 */
export function adoptStaticLogin(form: HTMLFormElement | null): void {
  const drawn = document.getElementById(STATIC_LOGIN_ID);
  if (!drawn) return;
  const typed = [...drawn.querySelectorAll('input')].filter(
    (input) => input.name !== '' && input.value !== '',
  );
  const chosen = [...drawn.querySelectorAll('select')].filter((select) => select.name !== '');
  const active = document.activeElement;
  const focused = active instanceof HTMLInputElement && drawn.contains(active) ? active : null;
  const caret: [number | null, number | null] | null = focused
    ? [focused.selectionStart, focused.selectionEnd]
    : null;
  const sent = drawn.dataset.submitted === 'true';
  drawn.remove();
  if (!form) return;
  for (const input of typed) {
    const live = form.elements.namedItem(input.name);
    if (live instanceof HTMLInputElement && live.value === '') typeInto(live, input.value);
  }
  for (const select of chosen) {
    const live = form.elements.namedItem(select.name);
    if (live instanceof HTMLSelectElement && live.value !== select.value)
      chooseIn(live, select.value);
  }
  const target = focused?.name ? form.elements.namedItem(focused.name) : null;
  if (target instanceof HTMLInputElement) target.focus();
  // Once React has drawn the typed values (its redraw puts the caret at the end, and the submit
  // handler reads the values from its state): the caret where it was, and the login sent.
  setTimeout(() => {
    if (caret && target instanceof HTMLInputElement && document.activeElement === target)
      target.setSelectionRange(caret[0], caret[1]);
    if (sent) sendWhenReady(form, Date.now() + SEND_WAIT_MS);
  }, 0);
}

/** How long a held login waits for the live form to take it (its first reads answered). */
const SEND_WAIT_MS = 10_000;
const SEND_POLL_MS = 25;

/**
 * Sends the live form as its own button would: once the button is enabled (the form's first
 * reads, the categories among them, have answered), never after the form has gone.
 */
function sendWhenReady(form: HTMLFormElement, until: number): void {
  if (!form.isConnected) return;
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (button?.disabled && Date.now() < until) {
    setTimeout(() => sendWhenReady(form, until), SEND_POLL_MS);
    return;
  }
  if (!button?.disabled) form.requestSubmit(button ?? undefined);
}
