/**
 * Streams an opened download to its file: the bytes go to `<file>.part` and become `<file>` only
 * once the whole body arrived, is as long as announced, and passes the format check
 * (media-format.ts). A download that stops early for any reason (too large, stalled, aborted,
 * cut, not the announced length, not the right format) leaves no file behind.
 *
 * Progress is reported on a timer (not per chunk), so reporting costs the same at any speed.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FormatProbe, type MediaKind } from './media-format.ts';

export type DownloadFailureReason =
  'invalid_format' | 'too_large' | 'stalled' | 'aborted' | 'incomplete' | 'failed';

/** Why a download ended without a file. */
export class DownloadFailure extends Error {
  readonly reason: DownloadFailureReason;
  constructor(reason: DownloadFailureReason, message: string) {
    super(message);
    this.name = 'DownloadFailure';
    this.reason = reason;
  }
}

export interface DownloadProgress {
  received: number;
  /** the announced length, when the server sent one */
  total: number | null;
  /** bytes per second over the last report */
  speed: number;
  /** bytes per second since the start */
  average: number;
  elapsedMs: number;
}

export interface SaveOptions {
  /** the final path; the partial file is `<file>.part` next to it */
  file: string;
  kind: MediaKind;
  /** the body is refused beyond this many bytes */
  maxBytes: number;
  /** Content-Length, when known: a body of another length is refused */
  expectedBytes: number | null;
  /** no byte for this long ends the download */
  stallTimeoutMs: number;
  /** how often `onProgress` runs */
  progressMs: number;
  onProgress(progress: DownloadProgress): void;
  signal: AbortSignal;
}

const partialOf = (file: string) => `${file}.part`;

function classify(err: unknown, signal: AbortSignal): DownloadFailure {
  if (err instanceof DownloadFailure) return err;
  if (signal.aborted) return new DownloadFailure('aborted', 'the download was aborted');
  const message = err instanceof Error ? err.message : String(err);
  return new DownloadFailure('failed', `the download failed: ${message}`);
}

/** Saves `source` to `options.file`; resolves with the byte count or rejects with a DownloadFailure. */
export async function saveDownload(
  source: Readable,
  options: SaveOptions,
): Promise<{ bytes: number }> {
  const partial = partialOf(options.file);
  const probe = new FormatProbe(options.kind);
  const started = Date.now();
  let received = 0;
  let lastAt = started;
  let lastBytes = 0;
  const snapshot = (): DownloadProgress => {
    const now = Date.now();
    const progress = {
      received,
      total: options.expectedBytes,
      speed: now > lastAt ? Math.round(((received - lastBytes) * 1000) / (now - lastAt)) : 0,
      average: now > started ? Math.round((received * 1000) / (now - started)) : 0,
      elapsedMs: now - started,
    };
    lastAt = now;
    lastBytes = received;
    return progress;
  };
  const ticker = setInterval(() => options.onProgress(snapshot()), options.progressMs);
  const stall = setTimeout(
    () =>
      source.destroy(
        new DownloadFailure(
          'stalled',
          `no data for ${Math.round(options.stallTimeoutMs / 1000)} s`,
        ),
      ),
    options.stallTimeoutMs,
  );
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      stall.refresh();
      received += chunk.length;
      if (received > options.maxBytes)
        return done(
          new DownloadFailure('too_large', `the file is larger than ${options.maxBytes} bytes`),
        );
      probe.push(chunk);
      if (probe.hopeless)
        return done(new DownloadFailure('invalid_format', `not a valid ${options.kind} image`));
      done(null, chunk);
    },
  });
  const out = createWriteStream(partial, { mode: 0o640 });
  try {
    await pipeline(source, meter, out, { signal: options.signal });
    if (options.expectedBytes !== null && received !== options.expectedBytes)
      throw new DownloadFailure(
        'incomplete',
        `received ${received} of ${options.expectedBytes} bytes`,
      );
    if (!probe.valid())
      throw new DownloadFailure('invalid_format', `not a valid ${options.kind} image`);
    await rename(partial, options.file);
    return { bytes: received };
  } catch (err) {
    source.destroy();
    // The partial file is removed once its stream has closed: a stream that failed while it was
    // still opening the file creates it after the failure, and would leave it behind.
    out.destroy();
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    await rm(partial, { force: true });
    throw classify(err, options.signal);
  } finally {
    clearInterval(ticker);
    clearTimeout(stall);
  }
}
