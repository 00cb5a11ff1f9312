/**
 * How media settle: a delete finished once the medium is `deleting` (its desktops stopped, it taken
 * out of every list, its file removed), and whatever a process that is gone left in a download or
 * delete state (at boot, and on the leader node every half lease).
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { eq, inArray } from 'drizzle-orm';
import { media, type MediaRow } from '../../platform/db/schema.ts';
import { mediaStatus, mediaStatuses } from '../../../../src/generated/policy.ts';
import { STOP_WAIT_MS, VM_STATES, withoutMedia } from './media-rules.ts';
import type { MediaContext } from './media-context.ts';
import { MEDIA_LEASE_PREFIX, mediaLease } from './media-downloads.ts';

/** Force-stops a desktop running with a medium (graceful, then forced) and waits for it. */
async function stopDesktop(ctx: MediaContext, id: string): Promise<void> {
  const { app } = ctx;
  for (let attempt = 0; attempt < 2; attempt++) {
    const desktop = await app.desktops.byId(id);
    if (!desktop || !VM_STATES.includes(desktop.state)) return;
    await app.engine.stop(id).catch(() => undefined);
  }
  const until = Date.now() + STOP_WAIT_MS;
  while (Date.now() < until) {
    const desktop = await app.desktops.byId(id);
    if (!desktop || !VM_STATES.includes(desktop.state)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The rest of a delete once the medium is `deleting`: the desktops running with it stopped, it
 * taken out of every desktop's and template's lists, its file removed, the medium `deleted`.
 */
export async function finishDelete(ctx: MediaContext, row: MediaRow): Promise<void> {
  const { app } = ctx;
  for (const user of await app.mediaUsage.users(row.id)) {
    const hardware = withoutMedia(user.hardware, row.id);
    if (user.kind === 'desktop') {
      await stopDesktop(ctx, user.id);
      await app.desktops.update(user.id, { hardware });
    } else await app.templates.update(user.id, { hardware });
  }
  await ctx.removeFiles(row);
  const deleted = await app.media.update(row.id, { status: 'deleted', path: null, size: null });
  if (deleted) ctx.publishDeleted(deleted);
}

/** Settles one medium left in a download or delete state by a process that is gone. */
async function settleOne(ctx: MediaContext, listed: MediaRow): Promise<void> {
  const { app } = ctx;
  // As it is now, under its lease: one that moved on meanwhile is left as it is.
  const row = await app.media.get(listed.id);
  if (!row || row.status !== listed.status) return;
  if (row.status === mediaStatus.deleting) {
    await finishDelete(ctx, row);
    return;
  }
  await ctx.removeFiles({ ...row, path: null });
  if (row.status === mediaStatus.downloadaborting) {
    const gone = await app.media.remove(row.id);
    if (gone) ctx.publishDeleted(gone);
  } else {
    const failed = await app.media.update(
      row.id,
      // the process running it stopped in the middle of it
      { status: 'downloadfailed', path: null, size: null, failure: 'incomplete' },
      { condition: eq(media.status, row.status) },
    );
    if (failed) await ctx.publish(failed, 'media.updated');
  }
}

/**
 * Media left in a download or delete state by a process that is gone (a restart, a node that
 * died): downloads end `downloadfailed` (aborted ones are removed), deletes are finished, and
 * partial files are removed. A medium whose lease a live process holds (downloading or deleting
 * it now, on any node) is left to it. At boot every such medium is looked at; the leader's
 * periodic pass (`graceMs`) leaves those changed within the grace (a create that has not taken
 * its lease yet).
 */
export async function settleMedia(
  ctx: MediaContext,
  options: { graceMs?: number } = {},
): Promise<void> {
  const { app } = ctx;
  await mkdir(ctx.mediaDir, { recursive: true });
  const rows = await app.media.list({
    where: inArray(media.status, [...mediaStatuses.fileBusy]),
  });
  const cutoff = Date.now() - (options.graceMs ?? 0);
  for (const row of rows) {
    if (options.graceMs && row.updatedAt.getTime() > cutoff) continue;
    await app.work.exclusive(mediaLease(row.id), () => settleOne(ctx, row));
  }
  const busy = await app.work.liveLeases(MEDIA_LEASE_PREFIX);
  for (const entry of await readdir(ctx.mediaDir))
    if (entry.endsWith('.part') && !busy.has(mediaLease(entry.split('.')[0] ?? '')))
      await rm(join(ctx.mediaDir, entry), { force: true });
}
