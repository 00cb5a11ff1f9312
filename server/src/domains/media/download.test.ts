import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DownloadFailure,
  saveDownload,
  type DownloadProgress,
  type SaveOptions,
} from './download.ts';

const ISO = readFileSync('/usr/lib/grub-rescue/grub-rescue-cdrom.iso');
const dir = mkdtempSync(join(tmpdir(), 'vdi-download-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let serial = 0;
function options(overrides: Partial<SaveOptions> = {}): SaveOptions {
  return {
    file: join(dir, `m${++serial}.iso`),
    kind: 'iso',
    maxBytes: 100 * 1024 * 1024,
    expectedBytes: null,
    stallTimeoutMs: 5_000,
    progressMs: 50,
    onProgress: () => undefined,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** The data in chunks of 64 KiB, `delayMs` apart. */
function slowly(data: Buffer, delayMs: number): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += 65_536) {
        await new Promise((r) => setTimeout(r, delayMs));
        yield data.subarray(i, i + 65_536);
      }
    })(),
  );
}

const failure = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DownloadFailure);
  return err instanceof DownloadFailure ? err.reason : null;
};

/** No file of this download is left: neither the medium nor its partial file. */
const leftNothing = (file: string) => {
  expect(existsSync(file)).toBe(false);
  expect(existsSync(`${file}.part`)).toBe(false);
};

describe('saveDownload', () => {
  it('writes the whole ISO, reporting progress on its timer', async () => {
    const seen: DownloadProgress[] = [];
    const o = options({ expectedBytes: ISO.length, onProgress: (p) => seen.push(p) });
    const { bytes } = await saveDownload(slowly(ISO, 3), o);
    expect(bytes).toBe(ISO.length);
    expect(readFileSync(o.file).equals(ISO)).toBe(true);
    expect(existsSync(`${o.file}.part`)).toBe(false);
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)?.total).toBe(ISO.length);
    expect(seen.at(-1)?.received).toBeGreaterThan(0);
    expect(seen.every((p, i) => i === 0 || p.received >= (seen[i - 1]?.received ?? 0))).toBe(true);
  });

  it('refuses bytes that are not an ISO image and keeps no file', async () => {
    const o = options();
    expect(await failure(saveDownload(Readable.from([Buffer.from('<html>nope</html>')]), o))).toBe(
      'invalid_format',
    );
    leftNothing(o.file);
  });

  it('stops a body larger than allowed as soon as it passes the bound', async () => {
    const o = options({ maxBytes: 1024 * 1024 });
    expect(await failure(saveDownload(Readable.from([ISO]), o))).toBe('too_large');
    leftNothing(o.file);
  });

  it('stops a floppy beyond 2.88 MB before the end of an endless body', async () => {
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(65_536));
      },
    });
    const o = options({ kind: 'floppy', file: join(dir, 'endless.img') });
    expect(await failure(saveDownload(endless, o))).toBe('invalid_format');
    leftNothing(o.file);
  });

  it('refuses a body shorter than announced', async () => {
    const o = options({ expectedBytes: ISO.length + 10 });
    expect(await failure(saveDownload(Readable.from([ISO]), o))).toBe('incomplete');
    leftNothing(o.file);
  });

  it('fails a stalled body after the stall timeout', async () => {
    const stalled = new Readable({ read: () => undefined });
    stalled.push(ISO.subarray(0, 1000));
    const o = options({ stallTimeoutMs: 200 });
    const started = Date.now();
    expect(await failure(saveDownload(stalled, o))).toBe('stalled');
    expect(Date.now() - started).toBeLessThan(2000);
    leftNothing(o.file);
  });

  it('stops on abort and removes the partial file', async () => {
    const controller = new AbortController();
    const o = options({ signal: controller.signal });
    const pending = saveDownload(slowly(ISO, 20), o);
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(`${o.file}.part`)).toBe(true);
    controller.abort();
    expect(await failure(pending)).toBe('aborted');
    leftNothing(o.file);
    expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);
  });
});
