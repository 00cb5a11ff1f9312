import { describe, expect, it } from 'vitest';
import { safeHref, sanitizeHtml } from './html-sanitizer.ts';

describe('sanitizeHtml', () => {
  it('keeps the allowed tags without their attributes', () => {
    expect(
      sanitizeHtml(
        '<h1 class="x">Title</h1><p id="p" style="color:red">A <strong>b</strong> <em>c</em> x<sub>2</sub> y<sup>3</sup></p><hr/><ul><li>one</li></ul><ol><li>two<br>three</li></ol><h4>end</h4>',
      ),
    ).toBe(
      '<h1>Title</h1><p>A <strong>b</strong> <em>c</em> x<sub>2</sub> y<sup>3</sup></p><hr><ul><li>one</li></ul><ol><li>two<br>three</li></ol><h4>end</h4>',
    );
  });

  it('drops scripts, styles, iframes and svg with their content', () => {
    const out = sanitizeHtml(
      '<p>a</p><script>alert(1)</script><style>p{}</style><iframe src="https://x"></iframe><svg><script>alert(2)</script></svg><SCRIPT src=//evil></SCRIPT><p>b</p>',
    );
    expect(out).toBe('<p>a</p><p>b</p>');
  });

  it('drops unknown tags but keeps their text', () => {
    expect(sanitizeHtml('<div><span>kept</span><img src=x onerror=alert(1)></div>')).toBe('kept');
  });

  it('removes event handlers and style attributes everywhere', () => {
    const out = sanitizeHtml(
      '<p onclick="alert(1)" onmouseover=alert(2) style="background:url(javascript:alert(3))">x</p><a href="https://ok.example" onclick="alert(4)">y</a>',
    );
    expect(out).not.toMatch(/on\w+=|style=|alert/);
    expect(out).toBe('<p>x</p><a href="https://ok.example" rel="noopener noreferrer">y</a>');
  });

  it('keeps only http, https, mailto and relative links and marks them noopener', () => {
    expect(sanitizeHtml('<a href="/desktops?x=1&amp;y=2">r</a>')).toBe(
      '<a href="/desktops?x=1&amp;y=2" rel="noopener noreferrer">r</a>',
    );
    expect(sanitizeHtml('<a href="mailto:help@example.org">m</a>')).toBe(
      '<a href="mailto:help@example.org" rel="noopener noreferrer">m</a>',
    );
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'javascript&colon;alert(1)',
      '&#106;avascript:alert(1)',
      '&#x6A;avascript:alert(1)',
      'data:text/html;base64,PHNjcmlwdD4=',
      'vbscript:msgbox(1)',
    ])
      expect(sanitizeHtml(`<a href="${bad}">x</a>`), bad).toBe(
        '<a rel="noopener noreferrer">x</a>',
      );
  });

  it('escapes text and attribute values so nothing new can open a tag', () => {
    expect(sanitizeHtml('1 < 2 && 3 > 2')).toBe('1 &lt; 2 &amp;&amp; 3 &gt; 2');
    expect(sanitizeHtml('&lt;script&gt;alert(1)&lt;/script&gt;')).toBe(
      '&lt;script&gt;alert(1)&lt;/script&gt;',
    );
    expect(sanitizeHtml('<a href="https://x.example/?q=&quot;><script>">t</a>')).toBe(
      '<a href="https://x.example/?q=&quot;&gt;&lt;script&gt;" rel="noopener noreferrer">t</a>',
    );
  });

  it('drops comments, doctypes and processing instructions', () => {
    expect(sanitizeHtml('<!doctype html><!-- <script>alert(1)</script> --><?xml x?><p>t</p>')).toBe(
      '<p>t</p>',
    );
  });

  it('balances the output: stray closing tags dropped, open ones closed', () => {
    expect(sanitizeHtml('</p><p><strong>a</p>b</em>')).toBe('<p><strong>a</strong></p>b');
    expect(sanitizeHtml('<ul><li>x')).toBe('<ul><li>x</li></ul>');
  });

  it('does not let a broken tag or an unclosed script through', () => {
    expect(sanitizeHtml('<p>a<script>alert(1)')).toBe('<p>a</p>');
    expect(sanitizeHtml('<a href="x')).toBe('&lt;a href="x');
    expect(sanitizeHtml('<scr<script>ipt>alert(1)</script>')).not.toMatch(/<script/i);
  });
});

describe('safeHref', () => {
  it('answers undefined for an empty or unsafe link', () => {
    expect(safeHref('')).toBeUndefined();
    expect(safeHref('javascript:alert(1)')).toBeUndefined();
    expect(safeHref('https://example.org/a')).toBe('https://example.org/a');
    expect(safeHref('#top')).toBe('#top');
  });
});

describe('sanitizeHtml against obfuscated links and markup', () => {
  it('drops every link that would run code', () => {
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'java&#115;cript:alert(1)',
      'java&#x09;script:alert(1)',
      ' javascript:alert(1)',
      'jav\tascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
    ])
      expect(sanitizeHtml(`<a href="${href}">x</a>`), href).not.toMatch(/href/);
  });

  it('removes scripts, event handlers and foreign elements with their payloads', () => {
    expect(sanitizeHtml('<SCRIPT SRC=//evil></SCRIPT>ok')).toBe('ok');
    expect(sanitizeHtml('<svg><script>alert(1)</script></svg>ok')).toBe('ok');
    expect(sanitizeHtml('<img src=x onerror=alert(1)>text')).toBe('text');
    expect(sanitizeHtml('<iframe src="https://evil"></iframe>')).toBe('');
    expect(sanitizeHtml('a<!-- <script>alert(1)</script> -->b')).toBe('ab');
  });
});
