/**
 * The boot check of the disk files against the rows that name them, run after the migrations and
 * before the engine adopts running machines and reconciles. It reports (one summary line with the
 * counts, one line per change) and repairs, conservatively:
 *
 * - A file in the disks folder that no desktop, template, media or recycle-bin entry names is
 *   moved (never deleted) to the folder's `.quarantine/<time>/`, keeping its relative path, so an
 *   administrator can look and restore or delete it. Never moved: symbolic links (nothing outside
 *   the folder is ever reached), files changed in the last ORPHAN_GRACE_MS (work whose row is not
 *   written yet), and the files of work in progress: a template whose disk is being copied or a
 *   media being downloaded, its file and every file whose name starts with that file's name or
 *   carries the row's id (`<disk>.part` while a copy runs).
 * - A file carrying the name of a file a row names counts as named wherever it is (disk files are
 *   named after ids): a data directory moved to another path loses no file to the quarantine.
 * - A stopped desktop whose disk file is gone becomes `failed` with the reason, so it is never
 *   started on a missing disk; "retry" makes a new disk from its template. When a file of that name
 *   is in the disks folder (the data directory moved), the desktop is only reported. A desktop left in
 *   `maintenance` by a disk operation the stop interrupted is `stopped` again (the operation is
 *   gone; the disk is as qemu-img left it, and `qemu-img resize` only ever changes it whole).
 *   Desktops that may be running are the reconciler's; they are only counted.
 * - A recycle-bin entry whose disk file is gone stays restorable (its desktop's settings are worth
 *   keeping, and a desktop made from a template gets a new disk with "retry"); its disk is marked
 *   `non_existing`, which the entry's detail shows.
 * - Templates and media whose file is gone are only reported: their own services own their states.
 * - A disk kept as a volume of a hypervisor host's storage pool is not looked for here: its host
 *   answers for it when the desktop starts.
 */
import { lstat, mkdir, readdir, rename, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { volumeHostOf } from '../../platform/hypervisor/host-volumes.ts';
import { ne } from 'drizzle-orm';
import { desktops, recycleBin, type RecycleBinRow } from '../../platform/db/schema.ts';
import type { DesktopState } from '../../../../src/generated/types.ts';
import { desktopStates, mediaStatuses } from '../../../../src/generated/policy.ts';
import { MISSING_DISK_DETAIL } from '../recycle-bin/index.ts';

/** A file younger than this is never taken for an orphan. */
export const ORPHAN_GRACE_MS = 60 * 60_000;

/** The quarantine folder, inside the disks folder (same file system: a move is a rename). */
export const QUARANTINE_DIR = '.quarantine';

/** Why a desktop whose disk is gone is failed (the restore of a recycled desktop says the same). */
export { MISSING_DISK_DETAIL };

/** Media states during which its file is being written or removed. */
const MEDIA_BUSY: readonly string[] = mediaStatuses.fileBusy;
/** Template states during which its disk is being copied. */
const TEMPLATE_BUSY: readonly string[] = ['creating'];
/** Desktop states in which its disk may be open in a running machine. */
const MAYBE_RUNNING: readonly DesktopState[] = desktopStates.maybeRunning;

export interface DiskCheckReport {
  /** Files looked at in the disks folder. */
  scanned: number;
  /** Orphans moved, relative to the disks folder. */
  quarantined: string[];
  /** Files no row names that were left alone: work in progress, recent, links. */
  kept: { inProgress: number; recent: number; links: number };
  /** Desktops made `failed` because their disk is gone. */
  failedDesktops: string[];
  /** Desktops back to `stopped` from an interrupted disk operation. */
  interrupted: string[];
  /** Desktops whose disk is gone, left as they are (already failed, or maybe running). */
  missingUnchanged: string[];
  /** Desktops whose disk is gone from its path but a file of its name is in the disks folder. */
  foundElsewhere: string[];
  /** Recycle-bin entries whose disk is gone (marked `non_existing`, still restorable). */
  entriesMissingDisk: string[];
  /** Templates and media whose file is gone (reported only). */
  templatesMissingDisk: string[];
  mediaMissingFile: string[];
}

export interface DiskCheckOptions {
  /** Files changed more recently than this are never quarantined (default ORPHAN_GRACE_MS). */
  graceMs?: number;
  now?: Date;
}

interface EntryStorage {
  directory_path?: unknown;
  status?: unknown;
}

const storagesOf = (row: RecycleBinRow): EntryStorage[] => {
  const list = (row.data as { storages?: unknown }).storages;
  return Array.isArray(list)
    ? list.filter((s): s is EntryStorage => typeof s === 'object' && s !== null)
    : [];
};

const exists = (path: string) =>
  stat(path).then(
    (st) => st.isFile(),
    () => false,
  );

/** Every regular file under `dir` (not following links), with the links found on the way. */
async function walk(
  dir: string,
  skip: string,
): Promise<{ files: { path: string; mtimeMs: number }[]; links: number }> {
  const out = { files: [] as { path: string; mtimeMs: number }[], links: 0 };
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (path === skip) continue;
    if (entry.isSymbolicLink()) out.links++;
    else if (entry.isDirectory()) {
      const inner = await walk(path, skip);
      out.files.push(...inner.files);
      out.links += inner.links;
    } else if (entry.isFile()) {
      const st = await lstat(path).catch(() => undefined);
      if (st?.isFile()) out.files.push({ path, mtimeMs: st.mtimeMs });
    }
  }
  return out;
}

/** Checks the disk files against the rows; repairs what it safely can and answers what it found. */
export async function checkDisks(
  app: FastifyInstance,
  options: DiskCheckOptions = {},
): Promise<DiskCheckReport> {
  const now = options.now ?? new Date();
  const graceMs = options.graceMs ?? ORPHAN_GRACE_MS;
  const disksDir = resolve(app.config.dataDir, 'disks');
  const defaultDisk = (id: string) => join(disksDir, `${id}.qcow2`);
  const report: DiskCheckReport = {
    scanned: 0,
    quarantined: [],
    kept: { inProgress: 0, recent: 0, links: 0 },
    failedDesktops: [],
    interrupted: [],
    missingUnchanged: [],
    foundElsewhere: [],
    entriesMissingDisk: [],
    templatesMissingDisk: [],
    mediaMissingFile: [],
  };

  const [desktopRows, templateRows, mediaRows, entryRows] = await Promise.all([
    app.db
      .select({
        id: desktops.id,
        diskPath: desktops.diskPath,
        state: desktops.state,
        currentAction: desktops.currentAction,
      })
      .from(desktops),
    app.templates.list(),
    app.media.list(),
    app.recycleBin.list({ where: ne(recycleBin.status, 'deleted') }),
  ]);

  const named = new Set<string>();
  /** Files and name parts of work in progress. */
  const busyPaths: string[] = [];
  const busyIds: string[] = [];
  for (const d of desktopRows) named.add(resolve(d.diskPath ?? defaultDisk(d.id)));
  for (const t of templateRows) {
    if (t.diskPath) named.add(resolve(t.diskPath));
    if (TEMPLATE_BUSY.includes(t.status)) {
      busyIds.push(t.id);
      if (t.diskPath) busyPaths.push(resolve(t.diskPath));
    }
  }
  for (const m of mediaRows) {
    if (m.path) named.add(resolve(m.path));
    if (MEDIA_BUSY.includes(m.status)) {
      busyIds.push(m.id);
      if (m.path) busyPaths.push(resolve(m.path));
    }
  }
  for (const e of entryRows)
    for (const s of storagesOf(e))
      if (typeof s.directory_path === 'string') named.add(resolve(s.directory_path));

  // (a) orphans
  const quarantineRoot = join(disksDir, QUARANTINE_DIR);
  const { files, links } = await walk(disksDir, quarantineRoot);
  report.scanned = files.length;
  report.kept.links = links;
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const namedBases = new Set([...named].map((p) => basename(p)));
  for (const file of files) {
    const base = basename(file.path);
    if (named.has(file.path) || namedBases.has(base)) continue;
    if (busyPaths.some((p) => file.path.startsWith(p)) || busyIds.some((id) => base.includes(id))) {
      report.kept.inProgress++;
      continue;
    }
    if (now.getTime() - file.mtimeMs < graceMs) {
      report.kept.recent++;
      continue;
    }
    const inside = relative(disksDir, file.path);
    const target = join(quarantineRoot, stamp, inside);
    try {
      await mkdir(dirname(target), { recursive: true });
      await rename(file.path, target);
      report.quarantined.push(inside);
      app.log.warn(
        { file: inside, quarantine: relative(app.config.dataDir, target) },
        'disk check: a disk file no row names was moved to the quarantine',
      );
    } catch (err) {
      app.log.warn({ err, file: inside }, 'disk check: an orphan disk file could not be moved');
    }
  }

  // (b) rows naming a missing file
  for (const d of desktopRows) {
    const path = d.diskPath ?? defaultDisk(d.id);
    // A volume of a hypervisor host's storage pool is its host's to check (at the next start).
    const present = volumeHostOf(app.config.dataDir, path) !== null || (await exists(path));
    if (d.state === 'maintenance' && present) {
      if (
        await app.desktops.update(d.id, { state: 'stopped', currentAction: null }, ['maintenance'])
      )
        report.interrupted.push(d.id);
      continue;
    }
    if (present || d.state === 'creating' || d.state === 'notCreated') continue;
    if (await exists(join(disksDir, basename(path)))) {
      report.foundElsewhere.push(d.id);
      app.log.warn(
        { desktop: d.id },
        'disk check: desktop disk missing at its path but present in the disks folder',
      );
      continue;
    }
    if (d.state === 'stopped' || d.state === 'maintenance') {
      const failed = await app.desktops.update(
        d.id,
        { state: 'failed', currentAction: null, detail: MISSING_DISK_DETAIL },
        [d.state],
      );
      if (failed) {
        report.failedDesktops.push(d.id);
        app.log.warn({ desktop: d.id }, 'disk check: desktop disk missing, desktop failed');
        continue;
      }
    }
    if (d.state === 'failed' || MAYBE_RUNNING.includes(d.state)) report.missingUnchanged.push(d.id);
  }
  for (const e of entryRows.filter((r) => r.status === 'recycled' || r.status === 'queued')) {
    const storages = storagesOf(e);
    let changed = false;
    const marked: EntryStorage[] = [];
    for (const s of storages) {
      const gone =
        typeof s.directory_path === 'string' &&
        s.status !== 'non_existing' &&
        volumeHostOf(app.config.dataDir, s.directory_path) === null &&
        !(await exists(s.directory_path));
      changed ||= gone;
      marked.push(gone ? { ...s, status: 'non_existing' } : s);
    }
    if (!changed) continue;
    await app.recycleBin.update(e.id, { data: { ...e.data, storages: marked } });
    report.entriesMissingDisk.push(e.id);
    app.log.warn({ entry: e.id }, 'disk check: recycle bin entry disk missing');
  }
  for (const t of templateRows)
    if (t.diskPath && t.status === 'ready' && !(await exists(t.diskPath)))
      report.templatesMissingDisk.push(t.id);
  for (const m of mediaRows)
    if (m.path && m.status === 'downloaded' && !(await exists(m.path)))
      report.mediaMissingFile.push(m.id);

  app.log.info(
    {
      scanned: report.scanned,
      quarantined: report.quarantined.length,
      keptInProgress: report.kept.inProgress,
      keptRecent: report.kept.recent,
      links: report.kept.links,
      failedDesktops: report.failedDesktops.length,
      interrupted: report.interrupted.length,
      missingUnchanged: report.missingUnchanged.length,
      foundElsewhere: report.foundElsewhere.length,
      entriesMissingDisk: report.entriesMissingDisk.length,
      templatesMissingDisk: report.templatesMissingDisk.length,
      mediaMissingFile: report.mediaMissingFile.length,
    },
    'disk check',
  );
  return report;
}
