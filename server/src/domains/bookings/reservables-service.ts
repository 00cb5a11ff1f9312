/**
 * The administration of reservable items, their profiles and the booking priority rules. The
 * bookings engine reads these tables on every call (no cache), so a change applies to the next
 * booking at once. Every write records its audit entry in the same transaction. An item or a
 * profile still in use is not deleted (428 `reservable_in_use`), a profile keeps at least the
 * units its bookings take at once (428 `units_in_use`), and ids and names are unique (409).
 */
import type {
  AdminBookingPriority,
  AdminBookingPriorityCreate,
  AdminBookingPriorityGroup,
  AdminBookingPriorityUpdate,
  AdminReservable,
  AdminReservableCreate,
  AdminReservableProfile,
  AdminReservableProfileCreate,
  AdminReservableProfileUpdate,
  AdminReservableUpdate,
} from '../../../../src/generated/types.ts';
import type { Db } from '../../platform/db/client.ts';
import { bookingRulesAdmin } from './booking-priority-rules.ts';
import { reservableItemsAdmin } from './reservable-items.ts';
import { reservableProfilesAdmin } from './reservable-profiles.ts';
import type { Actor } from './reservables-shared.ts';

export type { Actor } from './reservables-shared.ts';

export interface ReservablesAdmin {
  items(): Promise<AdminReservable[]>;
  item(id: string): Promise<AdminReservable>;
  createItem(actor: Actor, body: AdminReservableCreate): Promise<string>;
  updateItem(actor: Actor, id: string, body: AdminReservableUpdate): Promise<void>;
  deleteItem(actor: Actor, id: string): Promise<void>;
  profiles(): Promise<AdminReservableProfile[]>;
  profile(id: string): Promise<AdminReservableProfile>;
  createProfile(actor: Actor, body: AdminReservableProfileCreate): Promise<string>;
  updateProfile(actor: Actor, id: string, body: AdminReservableProfileUpdate): Promise<void>;
  deleteProfile(actor: Actor, id: string): Promise<void>;
  rules(): Promise<AdminBookingPriority[]>;
  rule(id: string): Promise<AdminBookingPriority>;
  ruleGroups(): Promise<AdminBookingPriorityGroup[]>;
  createRule(actor: Actor, body: AdminBookingPriorityCreate): Promise<string>;
  updateRule(actor: Actor, id: string, body: AdminBookingPriorityUpdate): Promise<void>;
  deleteRule(actor: Actor, id: string): Promise<void>;
}

export function reservablesAdmin(db: Db): ReservablesAdmin {
  return { ...reservableItemsAdmin(db), ...reservableProfilesAdmin(db), ...bookingRulesAdmin(db) };
}
