/** A running download's progress, as the media schema carries it. */
import type { MediaProgress } from '../../../../src/generated/types.ts';
import type { DownloadProgress } from './download.ts';

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

export const START: DownloadProgress = {
  received: 0,
  total: null,
  speed: 0,
  average: 0,
  elapsedMs: 0,
};
