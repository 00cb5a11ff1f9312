/** The calendar keeps no half-built table roles, and its scrolling grid takes focus. */
import { describe, expect, it } from 'vitest';
import { repairCalendarSemantics } from './calendar-semantics';

describe('calendar semantics', () => {
  it('removes the grid roles react-big-calendar leaves without their structure', () => {
    const root = document.createElement('div');
    root.innerHTML = `
      <div class="rbc-month-view" role="table" aria-label="Month View">
        <div class="rbc-row" role="row"><div class="rbc-header">
          <span role="columnheader" aria-sort="none">Mon</span></div></div>
        <div class="rbc-row-content" role="row"><div class="rbc-row">
          <div role="cell">1</div></div></div>
      </div>
      <button role="button">event</button>
      <div class="rbc-time-content"></div>`;
    repairCalendarSemantics(root);
    expect(root.querySelectorAll('[role="table"], [role="row"], [role="cell"]')).toHaveLength(0);
    expect(root.querySelector('[role="columnheader"], [aria-sort]')).toBeNull();
    expect(root.querySelector('button')?.getAttribute('role')).toBe('button');
    expect(root.querySelector<HTMLElement>('.rbc-time-content')?.tabIndex).toBe(0);
  });
});
