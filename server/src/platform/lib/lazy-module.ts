/**
 * A package loaded at its first use instead of at boot, so a portal that never uses it does not
 * hold its code in memory: the first caller waits for the load, later callers get the same module.
 * A load that failed is tried again by the next caller.
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
