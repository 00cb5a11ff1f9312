/** The end-to-end portals' shared settings and their prepared data (see e2e-portals.mjs). */
export declare const E2E_DEMO_PASSWORD: string;
export declare function e2eWorkers(): number;
export declare function workerDataDir(e2eDataDir: string, workerIndex: number): string;
export declare function workerDatabaseUrl(
  base: string | undefined,
  workerIndex: number,
): Promise<string | undefined>;
export declare function portalBaseEnv(
  dataDir: string,
  databaseUrl?: string,
): Record<string, string>;
export declare function preparePortalData(
  root: string,
  e2eDataDir: string,
  count: number,
  databaseBase?: string,
): Promise<{ name: string; ok: boolean; output: string; seconds: number }>;
