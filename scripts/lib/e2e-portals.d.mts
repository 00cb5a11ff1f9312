/** The end-to-end portals' shared settings and their prepared data (see e2e-portals.mjs). */
export declare const E2E_DEMO_PASSWORD: string;
export declare function e2eWorkers(): number;
export declare function workerDataDir(e2eDataDir: string, slot: number): string;
export declare function claimPortalSlot(e2eDataDir: string): number;
export declare function releasePortalSlots(e2eDataDir: string): void;
export declare function ownPortalSpecs(testDir: string): string[];
export declare function workerDatabaseUrl(
  base: string | undefined,
  slot: number,
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
