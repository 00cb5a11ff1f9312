/** The drawn login page: the built index.html with the language, the title, the boot script and the form. */
import { describe, expect, it } from 'vitest';
import { STATIC_LOGIN_ID } from '../../common/prerendered-login.ts';
import { loginPage } from './prerender-login.ts';

const INDEX = `<!doctype html>
<html lang="en">
  <head>
    <title>VDI Portal</title>
    <script type="module" crossorigin src="/assets/index-x.js"></script>
  </head>
  <body>
    <div id="root"></div>
  </body>
</html>`;

describe('loginPage', () => {
  it('puts the drawn form beside the root, and the language, the title and the boot script in', () => {
    const page = loginPage(
      INDEX,
      {
        html: '<form><input name="username"></form>',
        title: 'Portal - <Login> & "more"',
        lang: 'zh-Hans',
      },
      '/assets/login-boot-abc.js',
    );
    expect(page).toContain('<html lang="zh-Hans">');
    expect(page).toContain('<title>Portal - &lt;Login&gt; &amp; &quot;more&quot;</title>');
    expect(page).toMatch(/<script src="\/assets\/login-boot-abc\.js"><\/script>\s*<\/head>/);
    expect(page).toContain(
      `<div id="${STATIC_LOGIN_ID}"><form><input name="username"></form></div><div id="root"></div>`,
    );
    expect(page).toContain('<script type="module" crossorigin src="/assets/index-x.js"></script>');
  });

  it('fails the build when the page lacks a place it fills', () => {
    const drawn = { html: '<form></form>', title: 'x', lang: 'en' };
    expect(() => loginPage(INDEX.replace('<div id="root"></div>', ''), drawn, '/b.js')).toThrow(
      /root/,
    );
    expect(() => loginPage(INDEX.replace('<title>VDI Portal</title>', ''), drawn, '/b.js')).toThrow(
      /title/,
    );
  });
});
