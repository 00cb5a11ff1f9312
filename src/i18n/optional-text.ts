type Translate = (key: string | string[], options?: Record<string, unknown>) => string;

/** What `t` answers for a key no catalogue has (a text no catalogue can hold). */
const ABSENT = '\u0000absent';

/**
 * The text of an optional key (a field's help line, an action's hint, a form's introduction) when
 * a catalogue has it (or one of the keys, in order), in the language or in English; '' when nobody
 * wrote one. A missing key otherwise comes back as the key itself, which a page must never show.
 */
export function optionalText(
  t: Translate,
  key: string | string[],
  options: Record<string, unknown> = {},
): string {
  const text = t(key, { ...options, defaultValue: ABSENT });
  return text === ABSENT ? '' : text;
}
