/**
 * Where the keyboard focus goes while an action runs and after it: never to the page body. A
 * pressed button is disabled while its action runs and is often replaced once the record changes
 * (Start gives way to Stop); a menu item unmounts with its menu; a dialog's opener may be gone when
 * the dialog closes. The rule, whenever the focus has dropped to the body:
 *
 * 1. the pressed control (or the button of the menu it was in), when it is still there and enabled;
 * 2. while the action runs, the record itself (its card or row, `[data-record-id]`);
 * 3. once it is over, the control now in the pressed one's place among the record's controls (the
 *    Stop button where Start was), else the record's last control, else the record itself.
 *
 * The record is found again by its id: a re-rendered card or row is a new element.
 *
 * After a create, the list the form returns to puts the focus on the new record's card or row
 * (./created-record.ts says which record that is): once it is on screen, while the focus is lost.
 */

/** What the focus returns to: the pressed control, its record and its place among its controls. */
export interface FocusAnchor {
  element: HTMLElement;
  recordId: string | null;
  index: number;
}

const FOCUSABLE =
  'button, a[href], input, select, textarea, [tabindex]:not([tabindex="-1"]), [role="button"]';

/** The element a control stands for: the menu's button for an item of an open menu. */
export function pressedControl(element: Element | null): HTMLElement | null {
  if (!(element instanceof HTMLElement) || element === document.body) return null;
  const menu = element.closest<HTMLElement>('[role="menu"]');
  if (menu?.id) {
    const target = document.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(menu.id)}"]`);
    if (target) return target;
  }
  return element;
}

/** The record element (card or row) with this id now on screen. */
function recordElement(recordId: string | null): HTMLElement | null {
  if (recordId === null) return null;
  return document.querySelector<HTMLElement>(`[data-record-id="${CSS.escape(recordId)}"]`);
}

/** The controls of a record that can take the focus now, in document order. */
function controlsOf(scope: HTMLElement): HTMLElement[] {
  return Array.from(scope.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (element) =>
      !element.matches(':disabled') &&
      element.getAttribute('aria-disabled') !== 'true' &&
      !element.closest('[aria-hidden="true"], [inert]'),
  );
}

const usable = (element: HTMLElement): boolean =>
  element.isConnected &&
  !element.matches(':disabled') &&
  element.getAttribute('aria-disabled') !== 'true';

/** Remembers where a control sits (its record, its place among the record's controls). */
export function focusAnchor(pressed: Element | null): FocusAnchor | null {
  const element = pressedControl(pressed);
  if (!element) return null;
  const scope = element.closest<HTMLElement>('[data-record-id]');
  const recordId = scope?.getAttribute('data-record-id') ?? null;
  const index = scope ? controlsOf(scope).indexOf(element) : -1;
  return { element, recordId, index };
}

/** The focus is lost: on the body, nowhere, or on a record where this rule put it for a while. */
function focusLost(): boolean {
  const active = document.activeElement;
  return (
    !active ||
    active === document.body ||
    (active instanceof HTMLElement && active.hasAttribute('data-focus-held'))
  );
}

function focusRecord(scope: HTMLElement): void {
  if (!scope.hasAttribute('tabindex')) scope.setAttribute('tabindex', '-1');
  scope.setAttribute('data-focus-held', '');
  scope.addEventListener('blur', () => scope.removeAttribute('data-focus-held'), { once: true });
  scope.focus({ preventScroll: true });
}

/**
 * Applies the rule once. `running`: the action has not finished yet (its record takes the focus
 * rather than another of its controls). Returns the element that has the focus now, or null when
 * the focus was not lost (nothing done).
 */
export function restoreFocus(anchor: FocusAnchor, running = false): HTMLElement | null {
  if (!focusLost()) return null;
  const target = ((): HTMLElement | null => {
    if (usable(anchor.element)) return anchor.element;
    const scope = recordElement(anchor.recordId);
    if (!scope) return null;
    if (running) return scope;
    const controls = controlsOf(scope);
    return controls[anchor.index] ?? controls[controls.length - 1] ?? scope;
  })();
  if (!target) return null;
  if (target === document.activeElement) return target;
  if (target.hasAttribute('data-record-id') && !target.matches(FOCUSABLE)) focusRecord(target);
  else target.focus({ preventScroll: true });
  return target;
}

/** How long after an action the rule keeps watching (the record's new state arrives later). */
export const FOCUS_WATCH_MS = 8_000;
const TICK_MS = 100;

/**
 * Watches the focus from the press of a control until `FOCUS_WATCH_MS` after `done()` is called:
 * each time it has dropped to the body, the rule puts it back. Watching ends early when the user
 * moves the focus elsewhere (outside the record). Returns `done`.
 */
export function holdFocus(pressed: Element | null): () => void {
  const anchor = focusAnchor(pressed);
  return anchor ? watch(anchor, true) : () => undefined;
}

/**
 * Gives the focus back after a dialog the anchor's control opened has closed (the dialog had it
 * meanwhile): at once, then each time it drops to the body during `FOCUS_WATCH_MS`.
 */
export function giveFocusBack(anchor: FocusAnchor | null): void {
  if (anchor) watch(anchor, false)();
}

function watch(anchor: FocusAnchor, pending: boolean): () => void {
  let running = pending;
  let until = Number.POSITIVE_INFINITY;
  const stop = (): void => {
    clearInterval(timer);
    document.removeEventListener('focusin', moved);
  };
  const moved = (event: FocusEvent): void => {
    const target = event.target;
    if (!(target instanceof HTMLElement)) return;
    const scope = recordElement(anchor.recordId);
    if (target !== anchor.element && !scope?.contains(target)) stop();
  };
  const timer = setInterval(() => {
    if (Date.now() > until) stop();
    else restoreFocus(anchor, running);
  }, TICK_MS);
  document.addEventListener('focusin', moved);
  return () => {
    running = false;
    until = Date.now() + FOCUS_WATCH_MS;
    restoreFocus(anchor);
  };
}

/**
 * Puts the focus on the record with this id (its card or row) as soon as it is on screen, when the
 * focus is lost then (on the body: the form that made it is gone), and calls `focused` once it has
 * it. A live list may draw the record anew (a grid that finds its width moves a card to another
 * row): for `FOCUS_WATCH_MS` after, the focus dropped to the body goes back to it. Watching ends
 * when the user moves the focus elsewhere, or the record is on screen while the focus is elsewhere
 * from the start. Returns the function that stops watching.
 */
export function focusRecordWhenShown(recordId: string, focused: () => void): () => void {
  let until = Date.now() + FOCUS_WATCH_MS;
  let landed = false;
  const stop = (): void => {
    clearInterval(timer);
    document.removeEventListener('focusin', moved);
  };
  const moved = (event: FocusEvent): void => {
    const target = event.target;
    if (target instanceof Node && !recordElement(recordId)?.contains(target)) stop();
  };
  const attempt = (): void => {
    if (Date.now() > until) return stop();
    const scope = recordElement(recordId);
    if (!scope) return;
    if (!focusLost()) {
      if (!landed) stop();
      return;
    }
    if (!scope.matches(FOCUSABLE) && !scope.hasAttribute('tabindex'))
      scope.setAttribute('tabindex', '-1');
    scope.focus({ preventScroll: true });
    if (landed || document.activeElement !== scope) return;
    landed = true;
    until = Date.now() + FOCUS_WATCH_MS;
    focused();
  };
  const timer = setInterval(attempt, TICK_MS);
  document.addEventListener('focusin', moved);
  attempt();
  return stop;
}
