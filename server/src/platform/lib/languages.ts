/** The portal language of a request: the one its person chose, else its Accept-Language header's. */
import { LANGUAGE_COOKIE } from '../../../../common/prerendered-login.ts';
import { constants } from '../../../../src/generated/constants.ts';

const OFFERED: readonly string[] = constants.profile.languages.value;

/** `es`, `es-ES`, `zh-Hans`, `zh_Hans` -> the offered code, else undefined. */
export function offered(tag: string): string | undefined {
  const normal = tag.trim().replace(/-/g, '_');
  const exact = OFFERED.find((code) => code.toLowerCase() === normal.toLowerCase());
  if (exact) return exact;
  const base = normal.split('_')[0]?.toLowerCase() ?? '';
  if (base === 'zh') return OFFERED.find((code) => code.startsWith('zh'));
  return OFFERED.find((code) => code === base);
}

/** The first offered language of the header (by q, then by order), or null. */
export function languageOf(header: string | undefined): string | null {
  if (!header) return null;
  const ranges = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((r) => r.tag !== '' && r.tag !== '*' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const range of ranges) {
    const code = offered(range.tag);
    if (code) return code;
  }
  return null;
}

/** The language of a page request: the language cookie's when offered, else the header's. */
export function requestLanguage(
  cookieHeader: string | undefined,
  acceptLanguage: string | undefined,
) {
  const cookie = (cookieHeader ?? '')
    .split(';')
    .map((part) => part.trim().split('='))
    .find(([name]) => name === LANGUAGE_COOKIE)?.[1];
  let chosen: string | undefined;
  try {
    chosen = cookie ? offered(decodeURIComponent(cookie)) : undefined;
  } catch {
    chosen = undefined; // not a URI component: no choice
  }
  return chosen ?? languageOf(acceptLanguage);
}
