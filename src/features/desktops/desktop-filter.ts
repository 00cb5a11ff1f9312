/** Desktops page filtering: text over the generated filterable fields, started-only, section. */
import { fields } from '@/generated/fields';
import type { Desktop } from '@/generated/types';

export type DesktopSection = 'persistent' | 'temporary' | 'all';

/** Field paths the text filter searches (generated `filter: true`). */
export const FILTER_FIELDS: readonly string[] = (fields.Desktop as readonly { path: string; filter: boolean }[])
  .filter((field) => field.filter)
  .map((field) => field.path);

/** Lower-cased text of a desktop's filterable fields. */
function haystack(desktop: Desktop): string {
  const record = desktop as unknown as Record<string, unknown>;
  return FILTER_FIELDS.map((path) => {
    const value = record[path];
    return typeof value === 'string' ? value : '';
  })
    .join('\u0000')
    .toLowerCase();
}

/** Applies the page's filters. */
export function filterDesktops(desktops: readonly Desktop[], text: string, startedOnly: boolean, section: DesktopSection): Desktop[] {
  const needle = text.trim().toLowerCase();
  return desktops.filter((desktop) => {
    if (section === 'persistent' && desktop.type !== 'persistent') return false;
    if (section === 'temporary' && desktop.type !== 'nonpersistent') return false;
    if (startedOnly && desktop.state !== 'started') return false;
    return !needle || haystack(desktop).includes(needle);
  });
}
