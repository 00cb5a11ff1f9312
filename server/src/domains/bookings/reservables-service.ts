/**
 * The administration of reservable items, their profiles and the booking priority rules: the
 * plain CRUD of each (platform/crud) with the hooks where they differ, and the rule groups a
 * profile may name. The bookings engine reads these tables on every call (no cache), so a change
 * applies to the next booking at once. Every write records its audit entry in the same
 * transaction. An item or a profile still in use is not deleted (428 `reservable_in_use`), a
 * profile keeps at least the units its bookings take at once (428 `units_in_use`), and ids and
 * names are unique (409).
 */
import type { Db } from '../../platform/db/client.ts';
import { bookingRulesCrud, ruleGroups } from './booking-priority-rules.ts';
import { reservableItemsCrud } from './reservable-items.ts';
import { reservableProfilesCrud } from './reservable-profiles.ts';
import type { Directory } from './reservables-shared.ts';

export function reservablesAdmin(db: Db, directory: Directory) {
  return {
    items: reservableItemsCrud(db),
    profiles: reservableProfilesCrud(db, directory),
    rules: bookingRulesCrud(db, directory),
    ruleGroups: () => ruleGroups(db),
  };
}
