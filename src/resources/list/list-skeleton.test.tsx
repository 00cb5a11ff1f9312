import { afterEach, describe, expect, it } from 'vitest';
import { rememberListCount, skeletonCount } from './list-skeleton';

afterEach(() => localStorage.clear());

describe('the loading placeholders of a list', () => {
  it('are as many as the records the list showed last time', () => {
    expect(skeletonCount('desktops', 'cards')).toBe(8);
    rememberListCount('desktops', 3);
    expect(skeletonCount('desktops', 'cards')).toBe(3);
    expect(skeletonCount('desktops', 'table')).toBe(3);
  });

  it('are at least one, and no more than a screenful', () => {
    rememberListCount('desktops', 0);
    expect(skeletonCount('desktops', 'cards')).toBe(1);
    rememberListCount('desktops', 500);
    expect(skeletonCount('desktops', 'cards')).toBe(8);
  });
});
