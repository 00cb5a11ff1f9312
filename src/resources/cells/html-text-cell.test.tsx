import { describe, expect, it } from 'vitest';
import { htmlToText } from './html-text-cell';

describe('htmlToText', () => {
  it('shows the words of an HTML text, one line per block, and no tags', () => {
    expect(htmlToText('<p>Use the portal <b>fairly</b>.</p><p>Thanks</p>')).toBe(
      'Use the portal fairly.\nThanks',
    );
    expect(htmlToText('<img src=x onerror="alert(1)"><p>Safe</p>')).toBe('Safe');
  });
});
