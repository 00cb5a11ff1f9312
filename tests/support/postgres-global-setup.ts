import type { TestProject } from 'vitest/node';
import { startPostgres, type PgCluster } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

let cluster: PgCluster | undefined;

export async function setup(project: TestProject) {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    project.provide('databaseUrl', external);
    return;
  }
  cluster = await startPostgres();
  project.provide('databaseUrl', cluster.url);
}

export function teardown() {
  cluster?.stop();
}
