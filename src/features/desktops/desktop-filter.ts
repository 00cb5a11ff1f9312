/** Desktops page filtering: text over the generated filterable fields, started-only, section. */
import { fields } from '@/generated/fields';
import type { Desktop } from '@/generated/types';

export type DesktopSection = 'persistent' | 'temporary' | 'all';

/** Field paths the text filter searches (generated `filter: true`). */
export const FILTER_FIELDS: readonly string[] = (
  fields.Desktop as readonly { path: string; filter: boolean }[]
)
  .filter((field) => field.filter)
  .map((field) => field.path);

/**
 * Lower-cased text of a desktop's filterable fields, computed once per record object: the live
 * provider replaces a record only when it changes, so a keystroke over 5,000 desktops reuses them.
 */
const haystacks = new WeakMap<Desktop, string>();
function haystack(desktop: Desktop): string {
  let text = haystacks.get(desktop);
  if (text === undefined) {
    const record = desktop as unknown as Record<string, unknown>;
    text = FILTER_FIELDS.map((path) => {
      const value = record[path];
      return typeof value === 'string' ? value : '';
    })
      .join('\u0000')
      .toLowerCase();
    haystacks.set(desktop, text);
  }
  return text;
}

/** Computes the haystacks ahead of the first keystroke (call when idle after the list loads). */
export function warmFilter(desktops: readonly Desktop[]): void {
  for (const desktop of desktops) haystack(desktop);
}

/** Applies the page's filters. */
export function filterDesktops(
  desktops: readonly Desktop[],
  text: string,
  startedOnly: boolean,
  section: DesktopSection,
): readonly Desktop[] {
  const needle = text.trim().toLowerCase();
  if (!needle && !startedOnly && section === 'all') return desktops;
  return desktops.filter((desktop) => {
    if (section === 'persistent' && desktop.type !== 'persistent') return false;
    if (section === 'temporary' && desktop.type !== 'nonpersistent') return false;
    if (startedOnly && desktop.state !== 'started') return false;
    return !needle || haystack(desktop).includes(needle);
  });
}
