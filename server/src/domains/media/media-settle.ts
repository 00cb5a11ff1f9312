/**
 * How media settle: a delete finished once the medium is `deleting` (its desktops stopped, it taken
 * out of every list, its file removed), and at boot whatever the previous run left in a download
 * or delete state.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { eq, inArray } from 'drizzle-orm';
import { media, type MediaRow } from '../../platform/db/schema.ts';
import { mediaStatus, mediaStatuses } from '../../../../src/generated/policy.ts';
import { STOP_WAIT_MS, VM_STATES, withoutMedia } from './media-rules.ts';
import type { MediaContext } from './media-context.ts';

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

/**
 * At boot, before anything downloads: media left in a download state by the previous run end
 * `downloadfailed` (aborted ones are removed), media left deleting are deleted, and partial
 * files are removed.
 */
export async function settleMedia(ctx: MediaContext): Promise<void> {
  const { app } = ctx;
  await mkdir(ctx.mediaDir, { recursive: true });
  const rows = await app.media.list({
    where: inArray(media.status, [...mediaStatuses.fileBusy]),
  });
  for (const row of rows) {
    if (row.status === mediaStatus.deleting) {
      await finishDelete(ctx, row);
      continue;
    }
    await ctx.removeFiles({ ...row, path: null });
    if (row.status === mediaStatus.downloadaborting) {
      const gone = await app.media.remove(row.id);
      if (gone) ctx.publishDeleted(gone);
    } else {
      const failed = await app.media.update(
        row.id,
        // the server stopped in the middle of it
        { status: 'downloadfailed', path: null, size: null, failure: 'incomplete' },
        { condition: eq(media.status, row.status) },
      );
      if (failed) await ctx.publish(failed, 'media.updated');
    }
  }
  for (const entry of await readdir(ctx.mediaDir))
    if (entry.endsWith('.part')) await rm(join(ctx.mediaDir, entry), { force: true });
}
