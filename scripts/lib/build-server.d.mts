/** The server bundle `npm start` runs and the end-to-end portals run (see build-server.mjs). */
export declare const SERVER_ENTRY: string;
export declare const SERVER_BUNDLE: string;
/** The C allocator settings the server runs with (see build-server.mjs). */
export declare const SERVER_MALLOC_ENV: Readonly<Record<string, string>>;
/** Whether the bundle is older than the code it is built from. */
export declare function serverBundleStale(root: string): boolean;
/** Builds the bundle; resolves to its size in bytes. */
export declare function buildServer(root: string): Promise<number>;
/** Newest mtime of the files under `path` (0 when missing), skipping folders named in `skip`. */
export declare function newest(path: string, skip?: readonly string[]): number;
/** The bundle's text with its characters outside ASCII as `?` (see build-server.mjs). */
export declare function asciiOnly(text: string): string;
