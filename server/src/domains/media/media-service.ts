/**
 * Installation media (ISO and floppy images) between the routes and the stores: the caller's list,
 * the quota check, creating a medium from a URL and downloading it for real, retrying a failed
 * download, aborting one, the desktops that use a medium, deleting it, and a new desktop that
 * boots from it.
 *
 * - Who may act on a medium: whoever manages it (an admin, its owner, a manager of its owner's
 *   category whose owner is not an admin); anybody else gets 403 and nothing changes.
 * - A URL is checked before anything is stored and again at every connection and redirect
 *   (platform/lib/safe-fetch.ts). A create reserves its quota unit and inserts the medium in one
 *   transaction under the quota locks, then takes a download slot (429 when the user or the
 *   server runs too many), then opens the URL; a refusal at any step leaves no medium behind.
 * - The download runs in the background into DATA_DIR/media/<id>.<iso|img> (the file name never
 *   comes from the user), pushing the medium over the socket at least every second. It ends
 *   `downloaded`, `downloadfailedinvalidformat` (the bytes are not an image of the kind; no file
 *   kept) or `downloadfailed` (no file kept). Abort removes the partial file and the medium.
 * - Nothing stays downloading across a restart: a download cut by a shutdown ends failed, and at
 *   boot every medium left in a download state is settled (failed, or gone when it was being
 *   aborted) with its partial file removed.
 * - Deleting a medium force-stops the desktops running with it, takes it out of the ISO and floppy
 *   lists of every desktop and template, removes its file (only files the portal downloaded, under
 *   DATA_DIR/media) and marks it deleted.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne } from 'drizzle-orm';
import { media, mediaToWire } from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  IdResponse,
  Media,
  MediaCreate,
  MediaDesktop,
  MediaDesktopCreate,
} from '../../../../src/generated/types.ts';
import { MediaUrlError, vetUrl } from '../../platform/lib/safe-fetch.ts';
import { checkMediaCreate, mediaBytesLeft, lockQuotaScopes } from '../quotas/index.ts';
import { assertMediaRule, NOBODY, ruleStates } from './media-rules.ts';
import { createMediaContext } from './media-context.ts';
import { createDesktopFromMedia } from './media-desktop.ts';
import { createMediaDownloads, mediaLease } from './media-downloads.ts';
import { finishDelete, settleMedia } from './media-settle.ts';

export type MediaService = ReturnType<typeof createMediaService>;

export function createMediaService(app: FastifyInstance) {
  const ctx = createMediaContext(app);
  const { db } = ctx;
  const downloads = createMediaDownloads(ctx);

  return {
    /** GET /media: the caller's own media (deleted ones left out), by name. */
    async list(auth: AuthContext): Promise<Media[]> {
      const rows = await app.media.named(
        and(eq(media.userId, auth.userId), ne(media.status, 'deleted')),
      );
      return rows.map(({ row, userName, categoryName, groupName }) => ({
        ...mediaToWire(row),
        type: row.kind === 'iso' ? 'isos' : 'floppies',
        icon: row.kind === 'iso' ? 'fa-circle-o' : 'fa-floppy-o',
        user_name: userName,
        category_name: categoryName,
        group_name: groupName,
        editable: true,
      }));
    },

    /** GET /media/new/check_quota: one more medium fits the quota and limits. */
    async checkQuota(auth: AuthContext): Promise<void> {
      await checkMediaCreate(app, app.database.query, db, ctx.subjectOf(auth));
    },

    /** POST /media: stores the medium, opens its URL and downloads it in the background. */
    async create(auth: AuthContext, body: MediaCreate): Promise<void> {
      const name = body.name.trim();
      try {
        await vetUrl(body.url, ctx.policy);
      } catch (err) {
        if (err instanceof MediaUrlError) throw ctx.refused(err);
        throw err;
      }
      const allowed = body.allowed
        ? await app.allowedService.shareLists(auth, body.allowed)
        : NOBODY;
      const id = randomUUID();
      const { row, allowance } = await db.transaction(async (tx) => {
        const query = queryOn(tx);
        // Creates counted against the same user, group or category wait for each other here, so
        // a quota or limit with one unit left admits exactly one medium.
        await lockQuotaScopes(query, ctx.subjectOf(auth));
        const left = await checkMediaCreate(app, query, tx, ctx.subjectOf(auth));
        const taken = await app.media.list({
          where: and(
            eq(media.userId, auth.userId),
            eq(media.name, name),
            ne(media.status, 'deleted'),
          ),
          on: tx,
        });
        if (taken.length > 0)
          throw new ApiError(
            'conflict',
            'A media with this name already exists',
            'duplicated_name',
            {
              name,
            },
          );
        const created = await app.media.create(
          {
            id,
            name,
            description: body.description ?? '',
            kind: body.kind,
            url: body.url,
            status: 'downloadstarting',
            userId: auth.userId,
            categoryId: auth.categoryId,
            groupId: auth.groupId,
            allowed,
          },
          tx,
        );
        return { row: created, allowance: left.bytes };
      });
      const current = await downloads.startDownload(row, allowance, async () => {
        await app.media.remove(id);
      });
      await ctx.publish(current, 'media.created');
    },

    /** POST /media/download/{id}: downloads a failed medium again. */
    async retry(auth: AuthContext, id: string): Promise<void> {
      const row = await ctx.mediaFor(auth, id);
      assertMediaRule('download', row.status);
      try {
        await vetUrl(row.url ?? '', ctx.policy);
      } catch (err) {
        if (err instanceof MediaUrlError) throw ctx.refused(err);
        throw err;
      }
      const allowance = await mediaBytesLeft(app, app.database.query, {
        userId: row.userId,
        groupId: row.groupId,
        categoryId: row.categoryId,
        role: auth.role,
      });
      const claimed = await app.media.update(
        id,
        { status: 'downloadstarting', progress: null, path: null, size: null, failure: null },
        { condition: inArray(media.status, ruleStates('download')) },
      );
      if (!claimed) {
        assertMediaRule('download', (await app.media.get(id))?.status ?? 'deleted');
        throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id });
      }
      const current = await downloads.startDownload(claimed, allowance.bytes, async (failure) => {
        const back = await app.media.update(
          id,
          { status: 'downloadfailed', failure },
          { condition: eq(media.status, 'downloadstarting') },
        );
        if (back) await ctx.publish(back, 'media.updated');
      });
      await ctx.publish(current, 'media.updated');
    },

    /** POST /media/abort/{id}: stops the download, removes the partial file and the medium. */
    async abort(auth: AuthContext, id: string): Promise<void> {
      const row = await ctx.mediaFor(auth, id);
      assertMediaRule('abort', row.status);
      const aborting = await app.media.update(
        id,
        { status: 'downloadaborting' },
        { condition: inArray(media.status, ruleStates('abort')) },
      );
      if (!aborting) {
        assertMediaRule('abort', (await app.media.get(id))?.status ?? 'deleted');
        throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id });
      }
      await ctx.publish(aborting, 'media.updated');
      await downloads.stopDownload(id, 'abort');
      await ctx.removeFiles(aborting);
      const gone = await app.media.remove(id);
      if (gone) ctx.publishDeleted(gone);
    },

    /** GET /media/desktops/{id}: the desktops and templates whose hardware names the medium. */
    async desktops(auth: AuthContext, id: string): Promise<MediaDesktop[]> {
      await ctx.mediaFor(auth, id);
      return (await app.mediaUsage.users(id)).map((u) => ({
        id: u.id,
        name: u.name,
        kind: u.kind,
        status: u.status,
        user: u.userId,
        user_name: u.userName,
      }));
    },

    /** DELETE /media/{id}: see the rules at the top; answers null (deleted at once). */
    async delete(auth: AuthContext, id: string): Promise<null> {
      const row = await ctx.mediaFor(auth, id);
      assertMediaRule('delete', row.status);
      const claimed = await app.media.update(
        id,
        { status: 'deleting' },
        { condition: inArray(media.status, ruleStates('delete')) },
      );
      if (!claimed) {
        assertMediaRule('delete', (await app.media.get(id))?.status ?? 'deleted');
        throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id });
      }
      await ctx.publish(claimed, 'media.updated');
      await downloads.stopDownload(id, 'deleted');
      // Under the medium's lease; when another node holds it (its download runs there), the
      // leader's settle finishes the delete once that node lets it go.
      await app.work.exclusive(mediaLease(id), () => finishDelete(ctx, claimed));
      return null;
    },

    /**
     * POST /desktop/from/media: a persistent desktop with an empty disk of the chosen size, the
     * medium attached and booting from it first (unless the body names a boot order), inside the
     * desktop quota; its disk is made in the background and it ends `stopped`.
     */
    createDesktop(auth: AuthContext, body: MediaDesktopCreate): Promise<IdResponse> {
      return createDesktopFromMedia(ctx, auth, body);
    },

    /**
     * Media left in a download state by a process that is gone end `downloadfailed` (aborted ones
     * are removed), media left deleting are deleted, and partial files are removed; those a live
     * process holds are left to it (media-settle.ts).
     */
    settle(options: { graceMs?: number } = {}): Promise<void> {
      return settleMedia(ctx, options);
    },

    /** Stops every running download (they end `downloadfailed`) and waits for them. */
    close(): Promise<void> {
      return downloads.close();
    },

    /** Downloads running in this process (of one user, or in all). */
    activeDownloads: downloads.activeDownloads,

    /** Where a medium's file goes. */
    fileOf: ctx.fileOf,
  };
}
