/**
 * The focus rule after an action: never the page body. While the action runs its record (card or
 * row) holds the focus; once it is over the focus goes to the control in the pressed one's place
 * (Stop where Start was), found again by the record's id when the record was drawn anew; a
 * dialog's focus goes back to its opener, or to the control in its place when the opener is gone.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FOCUS_WATCH_MS,
  focusAnchor,
  focusRecordWhenShown,
  giveFocusBack,
  holdFocus,
} from './focus-after-action';

function card(actions: readonly string[], id = 'd1'): HTMLElement {
  const element = document.createElement('div');
  element.setAttribute('data-record-id', id);
  element.innerHTML =
    `<a href="/desktop/${id}">Lab desktop</a>` +
    actions.map((name) => `<button type="button" data-action="${name}">${name}</button>`).join('');
  document.body.append(element);
  return element;
}

const button = (scope: ParentNode, name: string) =>
  scope.querySelector<HTMLButtonElement>(`[data-action="${name}"]`) as HTMLButtonElement;

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  document.body.innerHTML = '';
});

describe('the focus after an action', () => {
  it('holds on the record while the action runs, then goes to the control in its place', () => {
    const scope = card(['start', 'more']);
    const start = button(scope, 'start');
    start.focus();
    const done = holdFocus(start);
    // Running: the pressed button is disabled and loses the focus.
    start.blur();
    start.disabled = true;
    expect(document.activeElement).toBe(document.body);
    vi.advanceTimersByTime(150);
    expect(document.activeElement).toBe(scope);

    // The record changes: Start gives way to Stop, in a card drawn anew.
    scope.remove();
    const next = card(['stop', 'more']);
    done();
    expect(document.activeElement).toBe(button(next, 'stop'));
  });

  it('puts the focus back when the new state arrives after the answer', () => {
    const scope = card(['start', 'more']);
    const start = button(scope, 'start');
    start.focus();
    const done = holdFocus(start);
    done();
    // The answer came: the button is enabled and still there, it keeps the focus.
    expect(document.activeElement).toBe(start);
    // Then the live event replaces it.
    scope.remove();
    const next = card(['stop', 'more']);
    vi.advanceTimersByTime(150);
    expect(document.activeElement).toBe(button(next, 'stop'));
  });

  it('leaves the focus where the user moved it, and stops watching', () => {
    const scope = card(['start']);
    const elsewhere = document.createElement('input');
    document.body.append(elsewhere);
    const start = button(scope, 'start');
    start.focus();
    const done = holdFocus(start);
    elsewhere.focus();
    done();
    expect(document.activeElement).toBe(elsewhere);
    elsewhere.blur();
    vi.advanceTimersByTime(FOCUS_WATCH_MS);
    expect(document.activeElement).toBe(document.body);
  });

  it('stops watching a while after the action', () => {
    const scope = card(['start']);
    const done = holdFocus(button(scope, 'start'));
    done();
    vi.advanceTimersByTime(FOCUS_WATCH_MS + 200);
    (document.activeElement as HTMLElement).blur();
    vi.advanceTimersByTime(500);
    expect(document.activeElement).toBe(document.body);
  });

  it('stands a menu item for the button of its menu', () => {
    const scope = card(['open']);
    scope.insertAdjacentHTML('beforeend', '<button aria-controls="menu-1">More</button>');
    document.body.insertAdjacentHTML(
      'beforeend',
      '<div role="menu" id="menu-1"><button role="menuitem">Start</button></div>',
    );
    const anchor = focusAnchor(document.querySelector('[role="menuitem"]'));
    expect(anchor?.element).toBe(scope.querySelector('[aria-controls="menu-1"]'));
    expect(anchor?.recordId).toBe('d1');
  });
});

describe('the focus after a dialog', () => {
  it('goes back to the opener, or to the control in its place when the opener is gone', () => {
    const scope = card(['edit', 'delete']);
    const anchor = focusAnchor(button(scope, 'edit'));
    giveFocusBack(anchor);
    expect(document.activeElement).toBe(button(scope, 'edit'));

    (document.activeElement as HTMLElement).blur();
    scope.remove();
    const next = card(['rename', 'delete']);
    giveFocusBack(anchor);
    expect(document.activeElement).toBe(button(next, 'rename'));
  });

  it('goes to the record itself when it has no control left', () => {
    const scope = card(['delete']);
    const anchor = focusAnchor(button(scope, 'delete'));
    scope.remove();
    const next = document.createElement('div');
    next.setAttribute('data-record-id', 'd1');
    document.body.append(next);
    giveFocusBack(anchor);
    expect(document.activeElement).toBe(next);
  });
});

describe('the focus on a record just created', () => {
  it('lands on the record once it is shown, and comes back when the record is drawn anew', () => {
    const focused = vi.fn();
    const stop = focusRecordWhenShown('d1', focused);
    expect(focused).not.toHaveBeenCalled();
    const first = card(['start']);
    vi.advanceTimersByTime(150);
    expect(document.activeElement).toBe(first);
    expect(focused).toHaveBeenCalledTimes(1);

    // A grid that finds its width moves the card to another row: a new element.
    first.remove();
    const second = card(['start']);
    vi.advanceTimersByTime(150);
    expect(document.activeElement).toBe(second);
    expect(focused).toHaveBeenCalledTimes(1);
    stop();
  });

  it('stops once the user puts the focus elsewhere', () => {
    const first = card(['start']);
    focusRecordWhenShown('d1', () => undefined);
    expect(document.activeElement).toBe(first);
    const elsewhere = document.createElement('input');
    document.body.append(elsewhere);
    elsewhere.focus();
    first.remove();
    card(['start']);
    elsewhere.blur();
    vi.advanceTimersByTime(500);
    expect(document.activeElement).toBe(document.body);
  });
});
