/**
 * react-big-calendar marks parts of its grid as table, rows and cells without the structure ARIA
 * needs (rows holding plain divs, column headers outside any row), which screen readers announce
 * as a broken table. The calendar is a region of buttons instead: the grid roles are removed, and
 * the scrolling time grid is focusable so a keyboard can scroll it.
 */
import { useEffect, type RefObject } from 'react';

const GRID_ROLES = new Set(['table', 'rowgroup', 'row', 'cell', 'gridcell', 'columnheader']);
const SCROLLERS = '.rbc-time-content, .rbc-agenda-content';

/** Removes the grid roles under `root` and makes its scrolling areas focusable. */
export function repairCalendarSemantics(root: HTMLElement): void {
  for (const element of Array.from(root.querySelectorAll('[role]'))) {
    if (GRID_ROLES.has(element.getAttribute('role') ?? '')) {
      element.removeAttribute('role');
      element.removeAttribute('aria-sort');
    }
  }
  for (const scroller of Array.from(root.querySelectorAll<HTMLElement>(SCROLLERS))) {
    if (!scroller.hasAttribute('tabindex')) scroller.tabIndex = 0;
  }
}

/** Keeps the calendar under `ref` repaired while it renders. */
export function useCalendarSemantics(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const root = ref.current;
    if (!root) return undefined;
    repairCalendarSemantics(root);
    const observer = new MutationObserver(() => repairCalendarSemantics(root));
    observer.observe(root, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ['role'],
    });
    return () => observer.disconnect();
  }, [ref]);
}
