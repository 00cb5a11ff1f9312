/**
 * The audit entry of a reservables change (items, profiles, priority rules), written through the
 * one audit helper in the transaction of the change itself, so that a change is never kept
 * without its entry (nor an entry without its change). Reservables belong to no category.
 */
import type { Caller } from '../../platform/auth/auth-context.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { appendAudit } from '../directory/index.ts';

export interface ReservablesAuditEntry {
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

export async function recordAudit(tx: Executor, entry: ReservablesAuditEntry): Promise<void> {
  await appendAudit(
    tx,
    {
      id: entry.actor.userId,
      name: entry.actor.name,
      role: entry.actor.role,
      categoryId: entry.actor.categoryId,
    },
    {
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      targetName: entry.targetName,
      categoryId: null,
      before: entry.before && { ...entry.before },
      after: entry.after && { ...entry.after },
    },
  );
}
