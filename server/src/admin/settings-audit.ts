/**
 * The audit entry of a settings write: who changed which setting, from what to what. Written on
 * the transaction of the write itself, so a setting never changes without its entry.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.ts';
import { auditLog } from '../db/schema.ts';

/** A drizzle transaction of the application database. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface SettingsAuditEntry {
  actorId: string;
  actorName: string;
  actorRole: string;
  /** The operation key, `adminSettings.<op>`. */
  action: string;
  /** The settings key written. */
  targetId: string;
  targetName: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** Appends one entry (settings belong to no category). */
export async function recordAudit(tx: Tx, entry: SettingsAuditEntry): Promise<void> {
  await tx.insert(auditLog).values({
    id: randomUUID(),
    actorId: entry.actorId,
    actorName: entry.actorName,
    actorRole: entry.actorRole,
    categoryId: null,
    action: entry.action,
    targetType: 'settings',
    targetId: entry.targetId,
    targetName: entry.targetName,
    before: entry.before,
    after: entry.after,
  });
}
