/**
 * What every part of the media service shares: where media files go and which of them are the
 * portal's, the URL policy, the wire item of a medium and its pushes, and reading a medium as its
 * caller may.
 */
import { rm } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { mediaToWire, type MediaRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageItem } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { createReferenceCheck } from '../desktops/index.ts';
import type { Media } from '../../../../src/generated/types.ts';
import { MediaUrlError, type FetchPolicy } from '../../platform/lib/safe-fetch.ts';
import { urlError } from './media-rules.ts';

export type MediaContext = ReturnType<typeof createMediaContext>;

export function createMediaContext(app: FastifyInstance) {
  const { config, db } = app;
  const mediaDir = resolve(config.dataDir, 'media');
  const policy: FetchPolicy = {
    allowedHosts: config.mediaAllowedHosts,
    connectTimeoutMs: config.mediaConnectTimeoutMs,
    stallTimeoutMs: config.mediaStallTimeoutMs,
  };
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

  return {
    app,
    config,
    db,
    mediaDir,
    policy,
    assertUsableReferences,
    subjectOf,
    fileOf,
    ownFile,
    removeFiles,
    wireOf,
    publish,
    publishDeleted,
    mediaFor,
    refused,
  };
}
