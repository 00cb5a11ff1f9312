/**
 * The one polling helper of the server tests: `until` calls `fn` every `every` ms until `ok` holds
 * for its value (returned) or `ms` have passed (an error that shows the last value); `sleep` waits;
 * `within` waits for a promise, or fails naming what did not happen.
 */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 20_000,
  every = 50,
): Promise<T> {
  const end = Date.now() + ms;
  let last = await fn();
  while (!ok(last)) {
    if (Date.now() > end) throw new Error(`condition not reached, last ${JSON.stringify(last)}`);
    await sleep(every);
    last = await fn();
  }
  return last;
}

/** `until` with another default time limit, for a file whose waits are longer or shorter. */
export const untilWithin =
  (limit: number) =>
  <T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = limit): Promise<T> =>
    until(fn, ok, ms);

/** Resolves as `promise` does, or rejects after `ms` saying that `what` did not happen. */
export async function within<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
