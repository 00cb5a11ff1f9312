/**
 * Cross-field rules of the account bodies, read from the schemas' x-constraints table: a `sameAs`
 * rule names the field that must equal another one (the password confirmation) and its code.
 */
import { ApiError } from '../../platform/http/api-error.ts';

export interface SameAsRule {
  readonly kind: string;
  readonly fields: readonly string[];
  readonly code: string;
}

/** Throws 400 with the rule's code (and the field in `errors`) when the two fields differ. */
export function checkSameAs(rule: SameAsRule, body: object): void {
  const [field, other] = rule.fields;
  if (rule.kind !== 'sameAs' || !field || !other)
    throw new Error(`not a sameAs rule: ${rule.kind} ${rule.fields.join(', ')}`);
  const value: unknown = Reflect.get(body, field);
  const expected: unknown = Reflect.get(body, other);
  if (value !== expected)
    throw new ApiError(
      'bad_request',
      `${field} must equal ${other}`,
      rule.code,
      { field, other },
      { errors: { [`/${field}`]: rule.code } },
    );
}
