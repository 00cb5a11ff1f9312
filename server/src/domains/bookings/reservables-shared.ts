/**
 * What the administration of reservables shares: the allowed roles as the forms show them and as
 * they are stored, the check of the users and groups the allowed lists name, the errors, and the
 * helpers of its writes.
 */
import { reservableItems, type ReservableRow } from '../../platform/db/schema.ts';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';

export {
  allowedFrom,
  checkLists,
  rolesOf,
  type Directory,
} from '../../platform/lib/allowed-lists.ts';

export const notFound = (what: string, id: string) =>
  new ApiError('not_found', `${what} not found`, 'not_found', { id });

export const exists = (what: string, field: string, code: string) =>
  new ApiError('conflict', `A ${what} with this ${field} already exists`, code, { field });

export const inUse = (what: string, uses: Record<string, number>) =>
  new ApiError('precondition_required', `The ${what} is in use`, 'reservable_in_use', uses);

/** Whether a write failed on a unique key (two creates of one id at the same instant). */
export function uniqueViolation(err: unknown): boolean {
  const codeOf = (e: unknown) =>
    e && typeof e === 'object' && 'code' in e ? (e as { code: unknown }).code : undefined;
  const cause = err && typeof err === 'object' && 'cause' in err ? err.cause : undefined;
  return codeOf(err) === '23505' || codeOf(cause) === '23505';
}

/** A create whose id another create took meanwhile answers the same 409 as when it was taken before. */
export async function creating<T>(work: () => Promise<T>, conflict: () => ApiError): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (uniqueViolation(err)) throw conflict();
    throw err;
  }
}

/** The item's row (locked for update when asked); 404 when it does not exist. */
export async function itemRow(on: Executor, id: string, lock = false): Promise<ReservableRow> {
  const query = on.select().from(reservableItems).where(eq(reservableItems.id, id));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Reservable item', id);
  return row;
}

/** The count a `select({ n: count() })` answers. */
export async function countOf(query: PromiseLike<{ n: number }[]>): Promise<number> {
  const [row] = await query;
  return Number(row?.n ?? 0);
}
