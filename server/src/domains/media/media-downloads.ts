/**
 * Downloads of media, in the background: a slot per download (429 past the user's or the
 * server's limit), the URL opened under the fetch policy, the bytes saved into the medium's file
 * with their progress pushed, the status settled at the end; and stopping them.
 */
import { mkdir, rm } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { media, type MediaRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { DEFAULT_RETRY_AFTER_SECONDS, tooManyRequests } from '../../platform/http/rate-limit.ts';
import type { Media, MediaProgress, MediaStatus } from '../../../../src/generated/types.ts';
import { DownloadSlots } from './download-slots.ts';
import type { HeldSlot } from '../../platform/jobs/cluster-slots.ts';
import { DownloadFailure, saveDownload } from './download.ts';
import { MediaUrlError, openUrl, type OpenedUrl } from '../../platform/lib/safe-fetch.ts';
import { GIB } from '../quotas/index.ts';
import { PROGRESS_MS } from './media-rules.ts';
import { progressOf, START } from './media-progress.ts';
import type { MediaContext } from './media-context.ts';

/** The kind of the media download slots counted across nodes (app.slots). */
export const MEDIA_DOWNLOAD_SLOT = 'media-download';
/** The lease a node holds on a medium while it downloads or settles it (app.work). */
export const MEDIA_LEASE_PREFIX = 'media:';
export const mediaLease = (id: string) => `${MEDIA_LEASE_PREFIX}${id}`;

interface RunningDownload {
  controller: AbortController;
  finished: Promise<void>;
}

/** Why a running download was stopped from outside. */
export type StopReason = 'abort' | 'shutdown' | 'deleted';
/** Why a download ended without a file, as the medium keeps it. */
export type MediaFailure = NonNullable<Media['failure']>;

export type MediaDownloads = ReturnType<typeof createMediaDownloads>;

export function createMediaDownloads(ctx: MediaContext) {
  const { app, config } = ctx;
  const slots = new DownloadSlots({
    perUser: config.mediaDownloadsPerUser,
    total: config.mediaDownloadsTotal,
  });
  const running = new Map<string, RunningDownload>();

  const refusal = (scope: 'user' | 'server', limit: number) =>
    tooManyRequests({
      retry: { seconds: DEFAULT_RETRY_AFTER_SECONDS },
      description:
        scope === 'user'
          ? `At most ${limit} media downloads of one user run at once`
          : 'The server runs as many media downloads as it may',
      code: 'media_downloads_limit',
      params: { limit, scope },
    });

  /** A slot in this process and one counted over every node (the same limits hold for all). */
  const takeSlot = async (userId: string): Promise<HeldSlot> => {
    const local = slots.take(userId);
    if (!local) {
      const reached = slots.limitReached(userId);
      throw refusal(reached?.scope ?? 'server', reached?.limit ?? config.mediaDownloadsTotal);
    }
    const shared = await app.slots
      .take(
        MEDIA_DOWNLOAD_SLOT,
        { userId },
        { perUser: config.mediaDownloadsPerUser, total: config.mediaDownloadsTotal },
      )
      .catch((err: unknown) => {
        local.release();
        throw err;
      });
    if (!('slot' in shared)) {
      local.release();
      throw refusal(shared.refused === 'user' ? 'user' : 'server', shared.limit);
    }
    return {
      // Answers once the other nodes no longer count it: an abort answers after it.
      release() {
        local.release();
        return shared.slot.release();
      },
    };
  };

  /** Refuses an announced length beyond the admin cap or what the user may still download. */
  const assertFits = (length: number | null, allowance: number) => {
    if (length === null) return;
    if (length > config.mediaMaxBytes)
      throw new ApiError(
        'bad_request',
        `The media is larger than the allowed ${config.mediaMaxBytes} bytes`,
        'media_too_large',
        { max: config.mediaMaxBytes },
      );
    if (length > allowance)
      throw new ApiError(
        'precondition_required',
        'Quota exceeded: media_size_user_quota_exceeded',
        'media_size_user_quota_exceeded',
        { limit: Math.floor(allowance / GIB) },
      );
  };

  /** Stores the progress of a running download and pushes it (skipped while the last write runs). */
  const progressWriter = (id: string) => {
    let pending: Promise<void> | null = null;
    const write = (progress: MediaProgress) => {
      if (pending) return;
      pending = app.media
        .update(id, { progress }, { condition: eq(media.status, 'downloading') })
        .then(async (row) => {
          if (row) await ctx.publish(row, 'media.updated');
        })
        .catch((err: unknown) => app.log.warn({ err, id }, 'media progress not stored'))
        .finally(() => {
          pending = null;
        });
    };
    return { write, settled: () => pending ?? Promise.resolve() };
  };

  /** Downloads an opened URL into the medium's file and settles its status; never throws. */
  const run = async (
    row: MediaRow,
    opened: OpenedUrl,
    controller: AbortController,
    maxBytes: number,
  ): Promise<void> => {
    const progress = progressWriter(row.id);
    let status: MediaStatus;
    let patch: Partial<MediaRow>;
    try {
      const file = ctx.fileOf(row);
      const started = Date.now();
      const { bytes } = await saveDownload(opened.response, {
        file,
        kind: row.kind,
        maxBytes: Math.min(maxBytes, config.mediaMaxBytes),
        expectedBytes: opened.contentLength,
        stallTimeoutMs: config.mediaStallTimeoutMs,
        progressMs: PROGRESS_MS,
        onProgress: (p) => progress.write(progressOf(p)),
        signal: controller.signal,
      });
      const elapsedMs = Date.now() - started;
      const average = elapsedMs > 0 ? Math.round((bytes * 1000) / elapsedMs) : bytes;
      status = 'downloaded';
      patch = {
        path: file,
        size: bytes,
        failure: null,
        progress: progressOf(
          { received: bytes, total: bytes, speed: average, average, elapsedMs },
          true,
        ),
      };
    } catch (err) {
      const failure =
        err instanceof DownloadFailure ? err : new DownloadFailure('failed', String(err));
      if (controller.signal.reason === 'abort' || controller.signal.reason === 'deleted') return;
      app.log.info(
        { id: row.id, reason: failure.reason, err: failure.message },
        'media download failed',
      );
      status =
        failure.reason === 'invalid_format' ? 'downloadfailedinvalidformat' : 'downloadfailed';
      // Why it failed stays with the medium, for its owner to read.
      patch = { path: null, size: null, failure: failure.reason };
    }
    await progress.settled();
    const settled = await app.media
      .update(row.id, { ...patch, status }, { condition: eq(media.status, 'downloading') })
      .catch((err: unknown) => {
        app.log.error({ err, id: row.id }, 'media download result not stored');
        return undefined;
      });
    if (settled) await ctx.publish(settled, 'media.updated').catch(() => undefined);
    else if (status === 'downloaded') await rm(ctx.fileOf(row), { force: true });
  };

  /** Opens the medium's URL under a slot and runs its download in the background. */
  const startDownload = async (
    row: MediaRow,
    maxBytes: number,
    onRefused: (failure: MediaFailure) => Promise<void>,
  ) => {
    // A download of this medium that has just ended in this process (its state written, its slot
    // and lease being given back) is waited for: a retry made as soon as the failure shows must
    // not find the medium's lease still held.
    await running.get(row.id)?.finished.catch(() => undefined);
    // The medium's lease, held until its download ends: no other node settles it meanwhile.
    const lease = await app.work.hold(mediaLease(row.id));
    if (!lease)
      throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id: row.id });
    let slot: HeldSlot;
    try {
      slot = await takeSlot(row.userId);
    } catch (err) {
      await lease.release();
      await onRefused('failed');
      throw err;
    }
    const giveBack = async () => {
      await slot.release();
      await lease.release();
    };
    const controller = new AbortController();
    let opened: OpenedUrl;
    try {
      await mkdir(ctx.mediaDir, { recursive: true });
      opened = await openUrl(row.url ?? '', ctx.policy, controller.signal);
    } catch (err) {
      await giveBack();
      await onRefused('failed');
      if (err instanceof MediaUrlError) throw ctx.refused(err);
      throw err;
    }
    try {
      assertFits(opened.contentLength, maxBytes);
    } catch (err) {
      opened.response.destroy();
      await giveBack();
      await onRefused('too_large');
      throw err;
    }
    const progress = progressOf({ ...START, total: opened.contentLength });
    const current = await app.media.update(
      row.id,
      { status: 'downloading', size: opened.contentLength, progress, path: null },
      { condition: eq(media.status, 'downloadstarting') },
    );
    if (!current) {
      opened.response.destroy();
      await giveBack();
      throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id: row.id });
    }
    const finished = run(current, opened, controller, maxBytes).finally(async () => {
      await giveBack();
      running.delete(row.id);
    });
    running.set(row.id, { controller, finished });
    return current;
  };

  /** Stops a running download of this process and waits until it has cleaned up. */
  const stopDownload = async (id: string, reason: StopReason) => {
    const download = running.get(id);
    if (!download) return;
    download.controller.abort(reason);
    await download.finished;
  };

  return {
    startDownload,
    stopDownload,
    /** Stops every running download (they end `downloadfailed`) and waits for them. */
    async close(): Promise<void> {
      await Promise.all([...running.keys()].map((id) => stopDownload(id, 'shutdown')));
    },
    /** Downloads running in this process (of one user, or in all). */
    activeDownloads: (userId?: string) => slots.active(userId),
  };
}
