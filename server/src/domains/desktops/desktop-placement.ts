/**
 * The placement of starts in this process, one at a time: a start's host is chosen and recorded
 * (the desktop goes `starting` on it) before the next start is placed, so two starts at once count
 * each other's memory.
 */
import type { EngineDesktop } from './types.ts';

/** Places the desktop (when a placement is set) and commits its start with the chosen host. */
export type StartPlacer = <T>(
  desktop: EngineDesktop,
  commit: (host: { host?: string }) => Promise<T>,
) => Promise<T>;

export function startPlacer(place?: (desktop: EngineDesktop) => Promise<string>): StartPlacer {
  let chain: Promise<unknown> = Promise.resolve();
  return (desktop, commit) => {
    if (!place) return commit({});
    const next = chain.then(async () => commit({ host: await place(desktop) }));
    chain = next.catch(() => undefined);
    return next;
  };
}
