/** The administration of booking priority rules (the limits a profile's rule group sets). */
import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import type { AdminBookingPriority } from '../../../../src/generated/types.ts';
import { bookingPriorities, type BookingRuleRow } from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { recordAudit } from './reservables-audit.ts';
import type { ReservablesAdmin } from './reservables-service.ts';
import { allowedFrom, creating, defined, exists, notFound, rolesOf } from './reservables-shared.ts';

const ruleToWire = (row: BookingRuleRow): AdminBookingPriority => ({
  id: row.id,
  rule_group: row.ruleId,
  name: row.name,
  description: row.description,
  priority: row.priority,
  forbid_time: row.forbidTime,
  max_time: row.maxTime,
  max_items: row.maxItems,
  max_booking_days: row.maxBookingDays,
  allowed_roles: rolesOf(row.allowed),
  allowed: row.allowed,
});

async function ruleRow(on: Executor, id: string): Promise<BookingRuleRow> {
  const [row] = await on.select().from(bookingPriorities).where(eq(bookingPriorities.id, id));
  if (!row) throw notFound('Booking priority rule', id);
  return row;
}

export function bookingRulesAdmin(
  db: Db,
): Pick<
  ReservablesAdmin,
  'rules' | 'rule' | 'ruleGroups' | 'createRule' | 'updateRule' | 'deleteRule'
> {
  return {
    async rules() {
      const rows = await db
        .select()
        .from(bookingPriorities)
        .orderBy(
          asc(bookingPriorities.ruleId),
          asc(bookingPriorities.priority),
          asc(bookingPriorities.id),
        );
      return rows.map(ruleToWire);
    },

    async rule(id) {
      return ruleToWire(await ruleRow(db, id));
    },

    async ruleGroups() {
      const rows = await db
        .selectDistinct({ ruleId: bookingPriorities.ruleId })
        .from(bookingPriorities)
        .orderBy(asc(bookingPriorities.ruleId));
      const groups = ['default', ...rows.map((r) => r.ruleId).filter((g) => g !== 'default')];
      return groups.map((g) => ({ id: g, name: g }));
    },

    async createRule(actor, body) {
      return creating(
        () =>
          db.transaction(async (tx) => {
            const [row] = await tx
              .insert(bookingPriorities)
              .values({
                id: randomUUID(),
                ruleId: body.rule_group,
                name: body.name.trim(),
                description: body.description ?? null,
                priority: body.priority ?? 0,
                forbidTime: body.forbid_time ?? 0,
                maxTime: body.max_time ?? null,
                maxItems: body.max_items ?? null,
                maxBookingDays: body.max_booking_days ?? null,
                allowed: allowedFrom({}, body.allowed_roles ?? [], body.allowed),
              })
              .returning();
            if (!row) throw new ApiError('internal_server');
            await recordAudit(tx, {
              actor,
              action: 'adminBookingPriorities.create',
              targetType: 'booking_priority',
              targetId: row.id,
              targetName: row.name,
              before: null,
              after: ruleToWire(row),
            });
            return row.id;
          }),
        () => exists('booking priority rule', 'id', 'conflict'),
      );
    },

    async updateRule(actor, id, body) {
      await db.transaction(async (tx) => {
        const before = await ruleRow(tx, id);
        const allowed =
          body.allowed_roles !== undefined || body.allowed !== undefined
            ? allowedFrom(before.allowed, body.allowed_roles, body.allowed)
            : undefined;
        const [after] = await tx
          .update(bookingPriorities)
          .set(
            defined({
              ruleId: body.rule_group,
              name: body.name?.trim(),
              description: body.description,
              priority: body.priority,
              forbidTime: body.forbid_time,
              maxTime: body.max_time,
              maxItems: body.max_items,
              maxBookingDays: body.max_booking_days,
              allowed,
            }),
          )
          .where(eq(bookingPriorities.id, id))
          .returning();
        if (!after) throw notFound('Booking priority rule', id);
        await recordAudit(tx, {
          actor,
          action: 'adminBookingPriorities.update',
          targetType: 'booking_priority',
          targetId: id,
          targetName: after.name,
          before: ruleToWire(before),
          after: ruleToWire(after),
        });
      });
    },

    async deleteRule(actor, id) {
      await db.transaction(async (tx) => {
        const before = await ruleRow(tx, id);
        await tx.delete(bookingPriorities).where(eq(bookingPriorities.id, id));
        await recordAudit(tx, {
          actor,
          action: 'adminBookingPriorities.delete',
          targetType: 'booking_priority',
          targetId: id,
          targetName: before.name,
          before: ruleToWire(before),
          after: null,
        });
      });
    },
  };
}
