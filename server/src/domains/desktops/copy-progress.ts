/**
 * The progress of a disk's copy on the desktop's card: each percent is written to the desktop's
 * `queue` (event `copy_disk`) one write at a time, a write that waits replaced by a newer percent,
 * so the card never goes back and ends on the last percent heard.
 */
export interface CopyProgress {
  /** Hears a percent (see the module comment). */
  report(percent: number): void;
  /** Resolves once the last percent heard is written. */
  settled(): Promise<void>;
}

export function copyProgress(write: (percent: number) => Promise<unknown>): CopyProgress {
  let latest: number | undefined;
  let running: Promise<void> | undefined;
  const drain = async () => {
    while (latest !== undefined) {
      const percent = latest;
      latest = undefined;
      await write(percent).catch(() => undefined);
    }
    running = undefined;
  };
  return {
    report(percent) {
      latest = percent;
      running ??= drain();
    },
    settled: () => running ?? Promise.resolve(),
  };
}
