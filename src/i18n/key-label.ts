/**
 * The draft label scripts/i18n-sync.ts derives from a catalogue key segment ("template_id" ->
 * "Template id"). Only ever a draft for English: the locale completeness test flags a locale value
 * that still equals it once English has a different text (a stale copy of an old draft).
 */
export function humaniseKey(text: string): string {
  const words = text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[-_.]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
