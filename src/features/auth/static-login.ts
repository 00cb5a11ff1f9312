/**
 * The hand-over from the login form drawn at build time (`app/login-prerender.tsx`) to the live one:
 * what was typed (and where the caret was) moves into the live form's inputs, the drawn form goes,
 * and the live form learns whether a login was already sent from it (held by
 * `static-login-boot.ts`): it sends that login itself once it can. Runs in the commit that first
 * draws the live form, so no frame shows both or neither.
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
 * removes it; nothing happens when the page has no drawn form. True when a login was sent from
 * the drawn form (held for the live form to send).
 */
export function adoptStaticLogin(form: HTMLFormElement | null): boolean {
  const drawn = document.getElementById(STATIC_LOGIN_ID);
  if (!drawn) return false;
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
  if (!form) return false;
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
  // Once React has drawn the typed values (its redraw puts the caret at the end): the caret
  // where it was.
  setTimeout(() => {
    if (caret && target instanceof HTMLInputElement && document.activeElement === target)
      target.setSelectionRange(caret[0], caret[1]);
  }, 0);
  return sent;
}
