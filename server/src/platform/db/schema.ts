/**
 * The drizzle tables, row types and row <-> wire mappers, generated from the schemas' `x-db`
 * declarations (src/generated/db.ts). drizzle-kit writes the migrations from the same tables.
 */
export * from '../../../../src/generated/db.ts';
export type { SessionRecordRow as SessionRow } from '../../../../src/generated/db.ts';
export type { AdminGroupRow as GroupRow } from '../../../../src/generated/db.ts';
export type { AdminCategoryRow as CategoryRow } from '../../../../src/generated/db.ts';
export type { AdminUserRow as UserRow } from '../../../../src/generated/db.ts';
export type { AdminUserInsert as UserInsert } from '../../../../src/generated/db.ts';
export type { AdminReservableRow as ReservableRow } from '../../../../src/generated/db.ts';
export type { AdminReservableProfileRow as ReservableProfileRow } from '../../../../src/generated/db.ts';
export type { AdminBookingPriorityRow as BookingRuleRow } from '../../../../src/generated/db.ts';
export type { AdminBookingPriorityInsert as BookingRuleInsert } from '../../../../src/generated/db.ts';
