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
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne } from 'drizzle-orm';
import { media, mediaToWire, type MediaRow } from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageItem } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import {
  stockImageOf,
  createReferenceCheck,
  checkViewers,
  NEW_DESKTOP_HARDWARE,
  MEDIA_INSTALLS,
} from '../desktops/index.ts';
import { stateActions } from '../../../../src/generated/actions.ts';
import * as validators from '../../../../src/generated/validators.js';
import type {
  DesktopGuestProperties,
  DesktopHardware,
  DesktopMediaRef,
  IdResponse,
  Media,
  MediaCreate,
  MediaDesktop,
  MediaDesktopCreate,
  MediaProgress,
  MediaStatus,
} from '../../../../src/generated/types.ts';
import { DownloadSlots, type DownloadSlot } from './download-slots.ts';
import { DownloadFailure, saveDownload, type DownloadProgress } from './download.ts';
import {
  MediaUrlError,
  openUrl,
  vetUrl,
  type FetchPolicy,
  type OpenedUrl,
} from '../../platform/lib/safe-fetch.ts';
import {
  checkMediaCreate,
  GIB,
  mediaBytesLeft,
  appliedQuota,
  assertHardwareWithin,
  checkDesktopCreate,
  hardwareLimits,
  lockQuotaScopes,
  RUNNING_STATES,
} from '../quotas/index.ts';

type MediaList = 'isos' | 'floppies';

/** The hardware without the medium in its ISO and floppy lists. */
function withoutMedia(hardware: DesktopHardware, id: string): DesktopHardware {
  const out = structuredClone(hardware);
  for (const list of ['isos', 'floppies'] as const) {
    const refs = out[list];
    if (!refs) continue;
    for (let i = refs.length - 1; i >= 0; i--) if (refs[i]?.id === id) refs.splice(i, 1);
  }
  return out;
}

/** The list fits the hardware's ISO list (the schema's bound, checked by its validator). */
const isIsoList = (refs: DesktopMediaRef[]): refs is NonNullable<DesktopHardware['isos']> =>
  validators.DesktopHardware({ isos: refs });
const isFloppyList = (refs: DesktopMediaRef[]): refs is NonNullable<DesktopHardware['floppies']> =>
  validators.DesktopHardware({ floppies: refs });

/**
 * The hardware with the medium first in `list` (and nowhere else in it); 400 when the list would
 * hold more media than a desktop takes.
 */
function withMediaFirst(hardware: DesktopHardware, list: MediaList, id: string): DesktopHardware {
  const out = withoutMedia(hardware, id);
  const refs = [{ id }, ...(out[list] ?? [])];
  if (list === 'isos' && isIsoList(refs)) out.isos = refs;
  else if (list === 'floppies' && isFloppyList(refs)) out.floppies = refs;
  else
    throw new ApiError(
      'bad_request',
      `A desktop takes no more ${list}`,
      'bad_request',
      { id },
      { errors: { [`/hardware/${list}`]: 'maxItems' } },
    );
  return out;
}

/** How often a running download stores and pushes its progress. */
export const PROGRESS_MS = 500;
/** How long a delete waits for the desktops it stops. */
const STOP_WAIT_MS = 30_000;

/** States whose download is running or about to (settled at boot: nothing runs then). */
const DOWNLOADING: readonly MediaStatus[] = ['downloadstarting', 'downloading', 'resetdownloading'];

/** Desktop states in which a VM may hold the medium open. */
const VM_STATES: readonly string[] = [...RUNNING_STATES, 'paused', 'stopping'];

/** A new desktop's viewers and credentials when the body sends none. */
const NEW_DESKTOP_GUEST: DesktopGuestProperties = {
  fullscreen: false,
  credentials: { username: 'isard', password: 'pirineus' },
  viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
};

const NOBODY = { roles: false, categories: false, groups: false, users: false } as const;

type MediaRule = keyof typeof stateActions.media.rules;

/** The statuses a rule of the media state machine (x-actions) allows. */
const ruleStates = (rule: MediaRule): MediaStatus[] => [...stateActions.media.rules[rule].states];

/** Throws the rule's code (428) when `status` does not allow it. */
function assertMediaRule(rule: MediaRule, status: string): void {
  const def = stateActions.media.rules[rule];
  if (!ruleStates(rule).some((s) => s === status))
    throw new ApiError(
      'precondition_required',
      `Not allowed while the media is ${status}`,
      def.code,
      { status },
    );
}

/** An API error for a refused URL (the description never names the addresses behind a host). */
function urlError(err: MediaUrlError): ApiError {
  if (err.code === 'media_url_not_found')
    return new ApiError('not_found', 'The media URL was not found', err.code);
  return new ApiError('bad_request', `The media URL can not be used: ${err.message}`, err.code);
}

const clock = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return '--:--:--';
  const s = Math.round(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
};

/** A download's progress as the media schema carries it (sizes in bytes, speeds in bytes/s). */
export function progressOf(p: DownloadProgress, done = false): MediaProgress {
  const total = done ? p.received : (p.total ?? 0);
  const percent = done
    ? 100
    : total > 0
      ? Math.min(100, Math.floor((p.received * 100) / total))
      : 0;
  const left = total > 0 && p.average > 0 ? ((total - p.received) * 1000) / p.average : NaN;
  return {
    received: p.received,
    received_percent: percent,
    total,
    total_percent: percent,
    total_bytes: total,
    xferd: 0,
    xferd_percent: 0,
    speed_current: p.speed,
    speed_download_average: p.average,
    speed_upload_average: 0,
    time_spent: clock(p.elapsedMs),
    time_left: done ? clock(0) : clock(left),
    time_total: done ? clock(p.elapsedMs) : clock(p.elapsedMs + left),
  };
}

const START: DownloadProgress = { received: 0, total: null, speed: 0, average: 0, elapsedMs: 0 };

interface RunningDownload {
  controller: AbortController;
  finished: Promise<void>;
}

/** Why a running download was stopped from outside. */
type StopReason = 'abort' | 'shutdown' | 'deleted';

export type MediaService = ReturnType<typeof createMediaService>;

export function createMediaService(app: FastifyInstance) {
  const { config, db } = app;
  const mediaDir = resolve(config.dataDir, 'media');
  const policy: FetchPolicy = {
    allowedHosts: config.mediaAllowedHosts,
    connectTimeoutMs: config.mediaConnectTimeoutMs,
    stallTimeoutMs: config.mediaStallTimeoutMs,
  };
  const slots = new DownloadSlots({
    perUser: config.mediaDownloadsPerUser,
    total: config.mediaDownloadsTotal,
  });
  const running = new Map<string, RunningDownload>();
  const assertUsableReferences = createReferenceCheck(app);
  const subjectOf = (auth: AuthContext) => ({
    userId: auth.userId,
    groupId: auth.groupId,
    categoryId: auth.categoryId,
    role: auth.role,
  });

  const fileOf = (row: Pick<MediaRow, 'id' | 'kind'>) =>
    join(mediaDir, `${row.id}.${row.kind === 'iso' ? 'iso' : 'img'}`);
  /** Only files the portal downloaded (under DATA_DIR/media) are ever removed. */
  const ownFile = (path: string | null): path is string => {
    if (!path) return false;
    const rel = relative(mediaDir, resolve(path));
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  };
  const removeFiles = async (row: Pick<MediaRow, 'id' | 'kind' | 'path'>) => {
    const file = fileOf(row);
    await rm(`${file}.part`, { force: true });
    await rm(file, { force: true });
    if (ownFile(row.path)) await rm(row.path, { force: true });
  };

  /** The wire item of a medium, with its owner's names. */
  const wireOf = async (row: MediaRow): Promise<Media> => {
    const owner = await app.users.withNames(row.userId);
    return {
      ...mediaToWire(row),
      type: row.kind === 'iso' ? 'isos' : 'floppies',
      icon: row.kind === 'iso' ? 'fa-circle-o' : 'fa-floppy-o',
      user_name: owner?.name ?? null,
      category_name: owner?.categoryName ?? null,
      group_name: owner?.groupName ?? null,
      editable: true,
    };
  };

  const publish = async (row: MediaRow, name: 'media.created' | 'media.updated') =>
    app.events.publish({ name, payload: await wireOf(row), ownerId: row.userId });
  const publishDeleted = (row: MediaRow) =>
    app.events.publish({
      name: 'media.deleted',
      payload: { id: row.id, version: row.version },
      ownerId: row.userId,
    });

  /** The medium the caller manages: 404 unknown (or deleted), 403 somebody else's. */
  const mediaFor = async (auth: AuthContext, id: string): Promise<MediaRow> => {
    const row = await app.media.get(id);
    if (!row || row.status === 'deleted')
      throw new ApiError('not_found', 'Media not found', 'not_found', { id });
    const owner = row.userId === auth.userId ? undefined : await app.users.byId(row.userId);
    const ownerRole = row.userId === auth.userId ? auth.role : (owner?.role ?? null);
    if (!canManageItem(auth, { ...row, ownerRole }))
      throw new ApiError('forbidden', 'Not enough rights on this media', 'forbidden', { id });
    return row;
  };

  /** The answer to a refused URL; what the host resolved to goes to the log only. */
  const refused = (err: MediaUrlError) => {
    app.log.info({ code: err.code, reason: err.detail ?? err.message }, 'media URL refused');
    return urlError(err);
  };

  const takeSlot = (userId: string) => {
    const slot = slots.take(userId);
    if (slot) return slot;
    const reached = slots.limitReached(userId);
    throw new ApiError(
      'too_many_requests',
      reached?.scope === 'user'
        ? `At most ${reached.limit} media downloads of one user run at once`
        : 'The server runs as many media downloads as it may',
      'media_downloads_limit',
      { limit: reached?.limit ?? config.mediaDownloadsTotal, scope: reached?.scope ?? 'server' },
    );
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
          if (row) await publish(row, 'media.updated');
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
      const file = fileOf(row);
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
      patch = { path: null, size: null };
    }
    await progress.settled();
    const settled = await app.media
      .update(row.id, { ...patch, status }, { condition: eq(media.status, 'downloading') })
      .catch((err: unknown) => {
        app.log.error({ err, id: row.id }, 'media download result not stored');
        return undefined;
      });
    if (settled) await publish(settled, 'media.updated').catch(() => undefined);
    else if (status === 'downloaded') await rm(fileOf(row), { force: true });
  };

  /** Opens the medium's URL under a slot and runs its download in the background. */
  const startDownload = async (row: MediaRow, maxBytes: number, onRefused: () => Promise<void>) => {
    let slot: DownloadSlot;
    try {
      slot = takeSlot(row.userId);
    } catch (err) {
      await onRefused();
      throw err;
    }
    const controller = new AbortController();
    let opened: OpenedUrl;
    try {
      await mkdir(mediaDir, { recursive: true });
      opened = await openUrl(row.url ?? '', policy, controller.signal);
    } catch (err) {
      slot.release();
      await onRefused();
      if (err instanceof MediaUrlError) throw refused(err);
      throw err;
    }
    try {
      assertFits(opened.contentLength, maxBytes);
    } catch (err) {
      opened.response.destroy();
      slot.release();
      await onRefused();
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
      slot.release();
      throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id: row.id });
    }
    const finished = run(current, opened, controller, maxBytes).finally(() => {
      slot.release();
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

  /** Force-stops a desktop running with a medium (graceful, then forced) and waits for it. */
  const stopDesktop = async (id: string) => {
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
  };

  /**
   * The rest of a delete once the medium is `deleting`: the desktops running with it stopped, it
   * taken out of every desktop's and template's lists, its file removed, the medium `deleted`.
   */
  const finishDelete = async (row: MediaRow) => {
    for (const user of await app.mediaUsage.users(row.id)) {
      const hardware = withoutMedia(user.hardware, row.id);
      if (user.kind === 'desktop') {
        await stopDesktop(user.id);
        await app.desktops.update(user.id, { hardware });
      } else await app.templates.update(user.id, { hardware });
    }
    await removeFiles(row);
    const deleted = await app.media.update(row.id, { status: 'deleted', path: null, size: null });
    if (deleted) publishDeleted(deleted);
  };

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
      await checkMediaCreate(app, app.database.query, db, subjectOf(auth));
    },

    /** POST /media: stores the medium, opens its URL and downloads it in the background. */
    async create(auth: AuthContext, body: MediaCreate): Promise<void> {
      const name = body.name.trim();
      try {
        await vetUrl(body.url, policy);
      } catch (err) {
        if (err instanceof MediaUrlError) throw refused(err);
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
        await lockQuotaScopes(query, subjectOf(auth));
        const left = await checkMediaCreate(app, query, tx, subjectOf(auth));
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
      const current = await startDownload(row, allowance, async () => {
        await app.media.remove(id);
      });
      await publish(current, 'media.created');
    },

    /** POST /media/download/{id}: downloads a failed medium again. */
    async retry(auth: AuthContext, id: string): Promise<void> {
      const row = await mediaFor(auth, id);
      assertMediaRule('download', row.status);
      try {
        await vetUrl(row.url ?? '', policy);
      } catch (err) {
        if (err instanceof MediaUrlError) throw refused(err);
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
        { status: 'downloadstarting', progress: null, path: null, size: null },
        { condition: inArray(media.status, ruleStates('download')) },
      );
      if (!claimed) {
        assertMediaRule('download', (await app.media.get(id))?.status ?? 'deleted');
        throw new ApiError('conflict', 'The media changed meanwhile', 'conflict', { id });
      }
      const current = await startDownload(claimed, allowance.bytes, async () => {
        const back = await app.media.update(
          id,
          { status: 'downloadfailed' },
          { condition: eq(media.status, 'downloadstarting') },
        );
        if (back) await publish(back, 'media.updated');
      });
      await publish(current, 'media.updated');
    },

    /** POST /media/abort/{id}: stops the download, removes the partial file and the medium. */
    async abort(auth: AuthContext, id: string): Promise<void> {
      const row = await mediaFor(auth, id);
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
      await publish(aborting, 'media.updated');
      await stopDownload(id, 'abort');
      await removeFiles(aborting);
      const gone = await app.media.remove(id);
      if (gone) publishDeleted(gone);
    },

    /** GET /media/desktops/{id}: the desktops and templates whose hardware names the medium. */
    async desktops(auth: AuthContext, id: string): Promise<MediaDesktop[]> {
      await mediaFor(auth, id);
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
      const row = await mediaFor(auth, id);
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
      await publish(claimed, 'media.updated');
      await stopDownload(id, 'deleted');
      await finishDelete(claimed);
      return null;
    },

    /**
     * POST /desktop/from/media: a persistent desktop with an empty disk of the chosen size, the
     * medium attached and booting from it first (unless the body names a boot order), inside the
     * desktop quota; its disk is made in the background and it ends `stopped`.
     */
    async createDesktop(auth: AuthContext, body: MediaDesktopCreate): Promise<IdResponse> {
      if (body.xml_id !== undefined && !MEDIA_INSTALLS.some((i) => i.id === body.xml_id))
        throw new ApiError(
          'not_found',
          `Unknown installation profile ${body.xml_id}`,
          'not_found',
          { id: body.xml_id },
          { errors: { '/xml_id': 'not_found' } },
        );
      const kind = body.kind ?? 'iso';
      const sent = body.hardware ?? {};
      const hardware = withMediaFirst(
        { ...NEW_DESKTOP_HARDWARE, ...sent, boot_order: sent.boot_order ?? [kind, 'disk'] },
        kind === 'iso' ? 'isos' : 'floppies',
        body.media_id,
      );
      await assertUsableReferences(auth, { hardware });
      const medium = await app.media.get(body.media_id);
      if (medium?.status !== 'downloaded')
        throw new ApiError(
          'precondition_required',
          'The media has not finished downloading',
          'media_not_downloaded',
          { id: body.media_id },
          { errors: { '/media_id': 'media_not_downloaded' } },
        );
      const guestProperties = body.guest_properties ?? NEW_DESKTOP_GUEST;
      checkViewers({
        viewers: guestProperties.viewers,
        interfaces: hardware.interfaces,
        videos: hardware.videos,
      });
      assertHardwareWithin(
        hardwareLimits(await appliedQuota(app.database.query, subjectOf(auth))),
        sent,
      );
      const id = randomUUID();
      await db.transaction(async (tx) => {
        const query = queryOn(tx);
        await lockQuotaScopes(query, subjectOf(auth));
        await checkDesktopCreate(query, subjectOf(auth), 'desktops');
        if (await app.desktops.nameTaken(auth.userId, body.name, undefined, tx))
          throw new ApiError(
            'conflict',
            'A desktop with this name already exists',
            'new_desktop_name_exists',
            { name: body.name.trim() },
          );
        await app.desktops.table.create(
          {
            id,
            userId: auth.userId,
            categoryId: auth.categoryId,
            groupId: auth.groupId,
            name: body.name.trim(),
            description: body.description ?? '',
            type: 'persistent',
            state: 'creating',
            templateId: null,
            hardware,
            guestProperties,
            image: stockImageOf(id),
          },
          tx,
        );
      });
      await app.desktops.publishCurrent(id, 'desktops.created');
      app.engine.background(app.engine.createDisk(id), 'disk creation failed', id);
      return { id };
    },

    /**
     * At boot, before anything downloads: media left in a download state by the previous run end
     * `downloadfailed` (aborted ones are removed), media left deleting are deleted, and partial
     * files are removed.
     */
    async settle(): Promise<void> {
      await mkdir(mediaDir, { recursive: true });
      const rows = await app.media.list({
        where: inArray(media.status, [...DOWNLOADING, 'downloadaborting', 'deleting']),
      });
      for (const row of rows) {
        if (row.status === 'deleting') {
          await finishDelete(row);
          continue;
        }
        await removeFiles({ ...row, path: null });
        if (row.status === 'downloadaborting') {
          const gone = await app.media.remove(row.id);
          if (gone) publishDeleted(gone);
        } else {
          const failed = await app.media.update(
            row.id,
            { status: 'downloadfailed', path: null, size: null },
            { condition: eq(media.status, row.status) },
          );
          if (failed) await publish(failed, 'media.updated');
        }
      }
      for (const entry of await readdir(mediaDir))
        if (entry.endsWith('.part')) await rm(join(mediaDir, entry), { force: true });
    },

    /** Stops every running download (they end `downloadfailed`) and waits for them. */
    async close(): Promise<void> {
      await Promise.all([...running.keys()].map((id) => stopDownload(id, 'shutdown')));
    },

    /** Downloads running in this process (of one user, or in all). */
    activeDownloads: (userId?: string) => slots.active(userId),

    /** Where a medium's file goes. */
    fileOf,
  };
}
