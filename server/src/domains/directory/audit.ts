/**
 * The audit log: one row per write made in the administration area, added inside the same
 * transaction as the write (so a write without its entry cannot happen). Snapshots are the
 * generated `<Entity>Snapshot` of the record: its stored wire properties but those marked
 * `x-secret`; credentials (password hash and history, API key, VPN keys, link ids) are
 * storage-only columns, never on the wire, so never in a snapshot.
 * Entries are only added; the database refuses to change or delete them.
 */
import { and, desc, eq } from 'drizzle-orm';
import { auditLog, type AuditEntryRow } from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { AuditEntry } from '../../../../src/generated/types.ts';
import { notFound, type Actor } from '../../platform/auth/actor.ts';
import { role } from '../../../../src/generated/policy.ts';

/** The most entries a list answers. */
export const AUDIT_LIST_LIMIT = 1000;

export { appendAudit, type AuditWrite } from '../../platform/repository/audit-writer.ts';

function toWire(r: AuditEntryRow): AuditEntry {
  return {
    id: r.id,
    at: r.at.toISOString(),
    actor: r.actorId,
    actor_name: r.actorName,
    actor_role: r.actorRole,
    category: r.categoryId,
    action: r.action,
    target_type: r.targetType,
    target_id: r.targetId,
    target_name: r.targetName,
    before: r.before,
    after: r.after,
  };
}

/** Newest first, at most AUDIT_LIST_LIMIT; a manager reads their own category's entries. */
export async function listAudit(db: Db, actor: Actor): Promise<AuditEntry[]> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(actor.role === role.admin ? undefined : eq(auditLog.categoryId, actor.categoryId))
    .orderBy(desc(auditLog.at))
    .limit(AUDIT_LIST_LIMIT);
  return rows.map(toWire);
}

/** One entry; another category's is not found for a manager. */
export async function showAudit(db: Db, actor: Actor, id: string): Promise<AuditEntry> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.id, id),
        actor.role === role.admin ? undefined : eq(auditLog.categoryId, actor.categoryId),
      ),
    )
    .limit(1);
  const row = rows[0];
  if (!row) throw notFound('Audit entry');
  return toWire(row);
}
