import { describe, expect, it } from 'vitest';
import { RDP_COOKIE_TTL_S, readRdpCookie, writeRdpCookie } from './rdp-cookie';

/** A cookie jar that keeps the last write of each name, as document.cookie does. */
function jar(): Pick<Document, 'cookie'> & { written: string[] } {
  const values = new Map<string, string>();
  const written: string[] = [];
  return {
    written,
    get cookie() {
      return [...values].map(([k, v]) => `${k}=${v}`).join('; ');
    },
    set cookie(line: string) {
      written.push(line);
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      values.set(pair.slice(0, at), pair.slice(at + 1));
    },
  };
}

describe('the browser RDP viewer cookie', () => {
  it('is missing until an Open writes it, then valid for 4 hours, then expired', () => {
    const doc = jar();
    const now = Date.UTC(2026, 10, 29, 10, 0, 0);
    expect(readRdpCookie(now, doc)).toEqual({ state: 'missing' });
    writeRdpCookie('d-1', 'Escritori ñ 😀', '/rdp', now, doc, true);
    expect(doc.written[0]).toMatch(
      /^browser_viewer=[\w-]+; Path=\/rdp; Max-Age=14400; SameSite=Strict; Secure$/,
    );
    const exp = now / 1000 + RDP_COOKIE_TTL_S;
    expect(readRdpCookie(now + 1000, doc)).toEqual({
      state: 'valid',
      cookie: { desktop: 'd-1', vmName: 'Escritori ñ 😀', exp },
    });
    expect(readRdpCookie(exp * 1000, doc).state).toBe('expired');
  });

  it('takes an unreadable cookie for a missing one', () => {
    expect(readRdpCookie(0, { cookie: 'browser_viewer=%%%' }).state).toBe('missing');
    expect(readRdpCookie(0, { cookie: 'browser_viewer=e30' }).state).toBe('missing');
  });
});
