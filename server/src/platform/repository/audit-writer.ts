/**
 * Adding an entry to the audit log: one row per write made in the administration area, added
 * inside the same transaction as the write (so a write without its entry cannot happen). Every
 * domain that makes such a write (the directory, the recycle bin's restore of an account) adds
 * its entry here. Entries are only added; the database refuses to change or delete them.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { auditLog } from '../db/schema.ts';
import type { Executor } from './entity-repository.ts';
import type { Actor } from '../auth/actor.ts';

export interface AuditWrite {
  action: string;
  /** user, group, category, roleVisibility, settings, reservable... */
  targetType: string;
  targetId: string;
  targetName: string | null;
  categoryId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export async function appendAudit(on: Executor, actor: Actor, entry: AuditWrite): Promise<void> {
  await on.insert(auditLog).values({
    id: randomUUID(),
    // the clock at the write itself: entries of one transaction keep their order
    at: sql`clock_timestamp()`,
    actorId: actor.id,
    actorName: actor.name,
    actorRole: actor.role,
    categoryId: entry.categoryId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    targetName: entry.targetName,
    before: entry.before,
    after: entry.after,
  });
}
