/**
 * The browser RDP viewer cookie (`browser_viewer`): the page that opens the RDP viewer writes the
 * desktop it is for (its id and name, no credential) and until when it may be opened (4 hours);
 * the `/rdp` page reads it. No cookie means the page was not opened from a desktop ("cookie not
 * set"); a cookie past its time means the link is stale ("cookie expired"). Each connection of
 * the page asks for its own single-use ticket with the user's session.
 */
export const RDP_COOKIE = 'browser_viewer';
/** How long the RDP viewer of a desktop may be opened (and reopened) from one Open (s). */
export const RDP_COOKIE_TTL_S = 4 * 3600;

export interface RdpViewerCookie {
  desktop: string;
  vmName: string;
  /** epoch seconds */
  exp: number;
}

export type RdpCookieState =
  | { state: 'missing' }
  | { state: 'expired'; cookie: RdpViewerCookie }
  | { state: 'valid'; cookie: RdpViewerCookie };

const toBase64Url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const fromBase64Url = (value: string): string => {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
};

/** Writes the cookie for a desktop (Path=/rdp, SameSite=Strict, Secure on https). */
export function writeRdpCookie(
  desktop: string,
  vmName: string,
  path: string,
  now = Date.now(),
  doc: Pick<Document, 'cookie'> = document,
  secure = typeof location !== 'undefined' && location.protocol === 'https:',
): void {
  const exp = Math.floor(now / 1000) + RDP_COOKIE_TTL_S;
  const value = toBase64Url(JSON.stringify({ desktop, vmName, exp } satisfies RdpViewerCookie));
  doc.cookie = `${RDP_COOKIE}=${value}; Path=${path}; Max-Age=${RDP_COOKIE_TTL_S}; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Reads the cookie: missing (or unreadable), expired, or valid. */
export function readRdpCookie(
  now = Date.now(),
  doc: Pick<Document, 'cookie'> = document,
): RdpCookieState {
  const raw = doc.cookie
    .split(';')
    .map((item) => item.trim())
    .find((item) => item.startsWith(`${RDP_COOKIE}=`))
    ?.slice(RDP_COOKIE.length + 1);
  if (!raw) return { state: 'missing' };
  try {
    const parsed = JSON.parse(fromBase64Url(raw)) as Partial<RdpViewerCookie>;
    if (typeof parsed.desktop !== 'string' || !parsed.desktop || typeof parsed.exp !== 'number')
      return { state: 'missing' };
    const cookie: RdpViewerCookie = {
      desktop: parsed.desktop,
      vmName: typeof parsed.vmName === 'string' ? parsed.vmName : '',
      exp: parsed.exp,
    };
    return cookie.exp * 1000 <= now ? { state: 'expired', cookie } : { state: 'valid', cookie };
  } catch {
    return { state: 'missing' };
  }
}
