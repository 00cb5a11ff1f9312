import { describe, expect, it } from 'vitest';
import { sanitizeHtml } from './safe-html';

describe('sanitizeHtml', () => {
  it('keeps the formatting tags and web links', () => {
    expect(
      sanitizeHtml('<h2>Title</h2><p>See <a href="https://example.org" onclick="x()">this</a></p>'),
    ).toBe(
      '<h2>Title</h2><p>See <a href="https://example.org" target="_blank" rel="noopener noreferrer">this</a></p>',
    );
  });

  it('drops scripts, handlers, unsafe links and unknown tags (keeping their text)', () => {
    expect(
      sanitizeHtml(
        '<img src=x onerror="alert(1)"><div style="x">Hi <b onmouseover="y()">you</b></div><script>evil()</script><a href="javascript:alert(1)">link</a><!-- c -->',
      ),
    ).toBe('Hi <b>you</b><a>link</a>');
    expect(sanitizeHtml(null)).toBe('');
  });
});
