/** The portal language of an Accept-Language header: its first offered language, by preference. */
import { constants } from '../../../../src/generated/constants.ts';

const OFFERED: readonly string[] = constants.profile.languages.value;

/** `es`, `es-ES`, `zh-Hans`, `zh_Hans` -> the offered code, else undefined. */
function offered(tag: string): string | undefined {
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
