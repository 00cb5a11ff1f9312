/**
 * The audit entry of an administration change, written in the transaction of the change itself so
 * that a change is never kept without its entry (nor an entry without its change).
 */
import { randomUUID } from 'node:crypto';
import { auditLog } from '../db/schema.ts';
import type { Caller } from '../lib/auth-context.ts';
import type { Executor } from '../plugins/app/entity-repository.ts';

export interface AuditEntry {
  actor: Caller & { name: string };
  /** `<resource>.<op>`, e.g. `adminReservables.create` */
  action: string;
  targetType: string;
  targetId: string;
  targetName: string | null;
  /** the record before the change (null when created) */
  before: object | null;
  /** the record after the change (null when deleted) */
  after: object | null;
}

/** Appends one entry to the audit log (never updated nor deleted afterwards). */
export async function recordAudit(tx: Executor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    id: randomUUID(),
    actorId: entry.actor.userId,
    actorName: entry.actor.name,
    actorRole: entry.actor.role,
    categoryId: null,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    targetName: entry.targetName,
    before: entry.before && { ...entry.before },
    after: entry.after && { ...entry.after },
  });
}
