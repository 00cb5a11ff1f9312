import { describe, expect, it } from 'vitest';
import { sanitizeNotificationHtml as clean } from './notification-html.ts';

describe('sanitizeNotificationHtml', () => {
  it('keeps the allowed tags without their attributes', () => {
    expect(
      clean(
        '<h1 class="x">T</h1><h4>t</h4><p style="color:red">a<br/>b<sub>1</sub><sup>2</sup></p><hr><ul><li>x</li></ul><ol><li><em>y</em></li></ol>',
      ),
    ).toBe(
      '<h1>T</h1><h4>t</h4><p>a<br>b<sub>1</sub><sup>2</sup></p><hr><ul><li>x</li></ul><ol><li><em>y</em></li></ol>',
    );
  });

  it('drops other tags, keeping their text, and scripts or styles with their content', () => {
    expect(clean('<div><span>a</span><h5>b</h5></div>')).toBe('ab');
    expect(clean('x<script>alert("<p>")</script>y<style>p{}</style>z')).toBe('xyz');
    expect(clean('<SCRIPT SRC=//evil></SCRIPT>ok')).toBe('ok');
    expect(clean('<svg><script>alert(1)</script></svg>ok')).toBe('ok');
    expect(clean('<img src=x onerror=alert(1)>text')).toBe('text');
    expect(clean('<iframe src="https://evil"></iframe>')).toBe('');
    expect(clean('a<!-- <script>alert(1)</script> -->b')).toBe('ab');
    expect(clean('a<!-- never closed <p>x</p>')).toBe('a');
  });

  it('keeps only links that navigate, and escapes what it keeps', () => {
    expect(
      clean('<a href="https://e.com/a?b=1&amp;c=2" title="T &quot;q&quot;" onclick="x()">l</a>'),
    ).toBe(
      '<a href="https://e.com/a?b=1&amp;c=2" rel="noopener noreferrer" title="T &quot;q&quot;">l</a>',
    );
    expect(clean('<a href="mailto:a@b.c">m</a>')).toBe(
      '<a href="mailto:a@b.c" rel="noopener noreferrer">m</a>',
    );
    expect(clean('<a href="/desktops">d</a>')).toBe(
      '<a href="/desktops" rel="noopener noreferrer">d</a>',
    );
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'java&#115;cript:alert(1)',
      'java&#x09;script:alert(1)',
      ' javascript:alert(1)',
      'jav\tascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
      '//evil.example/x',
      '/\\evil.example',
      '&unknown;javascript:alert(1)',
    ])
      expect(clean(`<a href="${href}">x</a>`), href).toBe('<a>x</a>');
  });

  it('escapes stray markup in text and closes what is left open', () => {
    expect(clean('1 < 2 > 0 & <3')).toBe('1 &lt; 2 &gt; 0 &amp; &lt;3');
    expect(clean('&lt;script&gt; &amp; &#169;')).toBe('&lt;script&gt; &amp; &#169;');
    expect(clean('<p><strong>a</p>b')).toBe('<p><strong>a</strong></p>b');
    expect(clean('</p>x<em>y')).toBe('x<em>y</em>');
    expect(clean('<img src="x" alt="a>b" onerror="alert(1)">')).toBe('');
    // A tag whose attributes swallow another tag's start: the inner one never opens.
    expect(clean('<p title="a" <script>alert(1)</script>')).toBe('<p>alert(1)</p>');
    expect(clean(null)).toBe('');
  });
});
