/**
 * media_create: one more medium for a user, within the applied quota (`isos` media, `media_size`
 * GB of them) and the `isos` limits of the user's group and category. Creating is allowed while
 * the count stays within the quota; a size is admitted while the user's media bytes plus the new
 * one stay within `media_size`. Call it inside the transaction that holds lockQuotaScopes and
 * inserts the medium, so a quota with one unit left admits exactly one medium.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Query } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { appliedQuota, type QuotaSubject } from './quotas.ts';

export const GIB = 1024 ** 3;

/** A number stored under `key` of a quota or limits object, if any. */
function quotaNumber(quota: object | false | undefined, key: string): number | undefined {
  if (!quota) return undefined;
  const value: unknown = Reflect.get(quota, key);
  return typeof value === 'number' ? value : undefined;
}

const exceeded = (code: string, limit: number) =>
  new ApiError('precondition_required', `Quota exceeded: ${code}`, code, { limit });

export interface MediaAllowance {
  /** bytes the user's media may still grow by (Infinity without a media_size quota) */
  bytes: number;
}

/**
 * Refuses one more medium of `bytes` (0 when not known yet) beyond the quota or limits; answers
 * how many bytes the user may still download.
 */
export async function checkMediaCreate(
  app: FastifyInstance,
  query: Query,
  on: Executor,
  subject: QuotaSubject,
  bytes = 0,
): Promise<MediaAllowance> {
  const applied = await appliedQuota(query, subject);
  const mine = await app.mediaUsage.usage('user_id', subject.userId, on);
  const count = quotaNumber(applied.quota, 'isos');
  if (count !== undefined && mine.count + 1 > count)
    throw exceeded('media_new_user_quota_exceeded', count);
  const group = quotaNumber(applied.groupLimits, 'isos');
  if (
    group !== undefined &&
    (await app.mediaUsage.usage('group_id', subject.groupId, on)).count + 1 > group
  )
    throw exceeded('media_new_group_limit_exceeded', group);
  const category = quotaNumber(applied.categoryLimits, 'isos');
  if (
    category !== undefined &&
    (await app.mediaUsage.usage('category_id', subject.categoryId, on)).count + 1 > category
  )
    throw exceeded('media_new_category_limit_exceeded', category);
  return mediaAllowance(quotaNumber(applied.quota, 'media_size'), mine.bytes, bytes);
}

/** What is left of a `media_size` quota (GB) once `used` bytes and a new medium of `bytes` count. */
export function mediaAllowance(
  quotaGb: number | undefined,
  used: number,
  bytes: number,
): MediaAllowance {
  if (quotaGb === undefined) return { bytes: Infinity };
  const left = quotaGb * GIB - used;
  if (bytes > left) throw exceeded('media_size_user_quota_exceeded', quotaGb);
  return { bytes: Math.max(0, left) };
}

/** The bytes a user may still download, outside any transaction (a retried download). */
export async function mediaBytesLeft(
  app: FastifyInstance,
  query: Query,
  subject: QuotaSubject,
  bytes = 0,
): Promise<MediaAllowance> {
  const applied = await appliedQuota(query, subject);
  const mine = await app.mediaUsage.usage('user_id', subject.userId);
  return mediaAllowance(quotaNumber(applied.quota, 'media_size'), mine.bytes, bytes);
}
