import type { TFunction } from 'i18next';
import type { FieldMeta } from '@/generated/fields';
import type { FieldOption } from './types';

/** Options of an enum field, labelled `resources:<resource>.enum.<path_with_underscores>.<value>`. */
export function enumOptions(
  t: TFunction,
  resource: string,
  meta: FieldMeta,
): FieldOption[] | undefined {
  if (!meta.enum) return undefined;
  const prefix = `resources:${resource}.enum.${meta.path.replace(/\./g, '_')}`;
  return meta.enum.map((value) => {
    const text = String(value);
    return { value: text, label: t(`${prefix}.${text}`, { defaultValue: text }) };
  });
}
