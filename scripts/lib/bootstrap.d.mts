/** The repository root (with a trailing slash). */
export declare const root: string;
/** Whether node_modules holds what the lock file names (see bootstrap.mjs). */
export declare function installedAsLocked(lock: string, stamp: string): boolean;
/** Runs `npm ci` when node_modules is missing or differs from the lock file. */
export declare function ensureNodeModules(): void;
/**
 * Installs the system packages `npm start` needs, and with forTests those of `npm test`, with
 * forCluster those of `npm run cluster`. Answers whether every one is there.
 */
export declare function ensureSystemPackages(options?: {
  forTests?: boolean;
  forCluster?: boolean;
}): boolean;
/**
 * ensureSystemPackages in the background (apt's output printed when it ends); answers whether
 * every package is there.
 */
export declare function startSystemPackages(options?: {
  forTests?: boolean;
  forCluster?: boolean;
}): Promise<boolean>;
