/**
 * A viewer page opened in the Open click follows the start: its address loses the mark, and for
 * FOLLOWS_START_MS it takes "not running" for "not started yet"; an unmarked page never does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FOLLOWS_START_HASH, FOLLOWS_START_MS, followsStart, takeStartMark } from './viewer-start';

afterEach(() => window.history.replaceState(null, '', '/'));

describe('a viewer page that follows a start', () => {
  it('loses the mark from its address and waits for a while only', () => {
    window.history.replaceState(null, '', `/viewer/vnc/d1?x=1${FOLLOWS_START_HASH}`);
    takeStartMark(1_000);
    expect(window.location.pathname + window.location.search + window.location.hash).toBe(
      '/viewer/vnc/d1?x=1',
    );
    expect(followsStart(1_000)).toBe(true);
    expect(followsStart(1_000 + FOLLOWS_START_MS - 1)).toBe(true);
    expect(followsStart(1_000 + FOLLOWS_START_MS)).toBe(false);
  });

  it('does not wait without the mark', () => {
    window.history.replaceState(null, '', '/viewer/vnc/d1');
    takeStartMark(1_000);
    expect(followsStart(1_000)).toBe(false);
    window.history.replaceState({ followsStartAt: 'soon' }, '', '/viewer/vnc/d1');
    expect(followsStart(1_000)).toBe(false);
  });
});
