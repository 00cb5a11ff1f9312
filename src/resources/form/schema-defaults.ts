/** The schema's `default` values of a generated type (a new record's starting values). */
import { defaults } from '@/generated/constants';

export function schemaDefaults(type: string): Readonly<Record<string, unknown>> {
  const value = (defaults as Readonly<Record<string, unknown>>)[type];
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : {};
}
