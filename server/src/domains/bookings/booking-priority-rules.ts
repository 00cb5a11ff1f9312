/**
 * The administration of booking priority rules (the limits a profile's rule group sets): the
 * plain CRUD of the adminBookingPriorities resource (list in rule group and priority order, show,
 * create, update, delete, with the allowed roles as the form shows them), and the rule groups a
 * profile may name. A new rule gets its id from the server; the allowed lists name existing users
 * and groups.
 */
import { randomUUID } from 'node:crypto';
import { asc } from 'drizzle-orm';
import type {
  AdminBookingPriority,
  AdminBookingPriorityCreate,
  AdminBookingPriorityGroup,
  AdminBookingPriorityUpdate,
} from '../../../../src/generated/types.ts';
import {
  adminBookingPriorityFromCreate,
  adminBookingPriorityFromUpdate,
  adminBookingPriorityToWire,
  bookingPriorities,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService, type CrudActor } from '../../platform/crud/crud-service.ts';
import { appendAudit } from '../directory/index.ts';
import {
  allowedFrom,
  checkLists,
  creating,
  exists,
  rolesOf,
  type Directory,
} from './reservables-shared.ts';

export function bookingRulesCrud(db: Db, directory: Directory) {
  const service = crudService<
    'bookingPriorities',
    AdminBookingPriority,
    AdminBookingPriorityCreate,
    AdminBookingPriorityUpdate
  >(db, {
    resource: 'adminBookingPriorities',
    storage: 'bookingPriorities',
    label: 'Booking priority rule',
    toWire: (row) => ({ ...adminBookingPriorityToWire(row), allowed_roles: rolesOf(row.allowed) }),
    fromCreate: adminBookingPriorityFromCreate,
    fromUpdate: adminBookingPriorityFromUpdate,
    orderBy: ['ruleId', 'priority'],
    audit: { targetType: 'booking_priority', append: appendAudit },
    hooks: {
      async beforeCreate(_ctx, body) {
        await checkLists(directory, body.allowed);
        return {
          id: randomUUID(),
          name: body.name.trim(),
          allowed: allowedFrom({}, body.allowed_roles ?? [], body.allowed),
        };
      },
      async beforeUpdate({ before }, body) {
        await checkLists(directory, body.allowed);
        return {
          ...(body.name === undefined ? {} : { name: body.name.trim() }),
          ...(body.allowed_roles !== undefined || body.allowed !== undefined
            ? { allowed: allowedFrom(before.allowed, body.allowed_roles, body.allowed) }
            : {}),
        };
      },
    },
  });
  return {
    ...service,
    create: (actor: CrudActor, body: AdminBookingPriorityCreate) =>
      creating(
        () => service.create(actor, body),
        () => exists('booking priority rule', 'id', 'conflict'),
      ),
  } satisfies typeof service;
}

/** The rule groups a profile may name: `default` (always; no rule = no limits), then the others. */
export async function ruleGroups(db: Db): Promise<AdminBookingPriorityGroup[]> {
  const rows = await db
    .selectDistinct({ ruleId: bookingPriorities.ruleId })
    .from(bookingPriorities)
    .orderBy(asc(bookingPriorities.ruleId));
  const groups = ['default', ...rows.map((r) => r.ruleId).filter((g) => g !== 'default')];
  return groups.map((g) => ({ id: g, name: g }));
}
