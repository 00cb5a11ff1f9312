/**
 * The last-admin rule of the directory, shared by the user writes that demote, disable or delete.
 */
import { and, count, eq, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { users } from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { role } from '../../../../src/generated/policy.ts';

/**
 * The portal keeps at least one enabled admin: a write that would leave none is refused (428
 * last_admin). Writes that demote, disable or delete an admin take one lock, so two of them at
 * once cannot each leave the other as the last one.
 */
export async function keepAnAdmin(tx: Executor): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('portal-admins'))`);
  const [row] = await tx
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, role.admin), eq(users.active, true)));
  if ((row?.n ?? 0) === 0)
    throw new ApiError(
      'precondition_required',
      'The portal would be left without an enabled admin',
      'last_admin',
    );
}
