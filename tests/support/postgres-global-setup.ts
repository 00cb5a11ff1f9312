/**
 * Vitest global setup of the server projects: one private PostgreSQL cluster per run (or
 * TEST_DATABASE_URL's) and on it one template database with every migration applied, which each
 * test file copies into a database of its own (server/test/support/helper.ts createTestDatabase).
 * Also the run's directory for the embedded database's template, which the first test that needs
 * one fills (server/test/support/pglite-template.ts).
 */
import type { TestProject } from 'vitest/node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../server/src/platform/db/client.ts';
import { migrate } from '../../server/src/platform/db/migrate.ts';
import { startPostgres } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** a database with every migration applied; test files clone it (CREATE DATABASE … TEMPLATE) */
    templateDatabase: string;
    /** where the run's migrated PGlite data directory is made once and copied from */
    pgliteTemplate: string;
    /** how a test file's database copies the template: `STRATEGY FILE_COPY` in memory, else '' */
    cloneStrategy: string;
  }
}

interface Shared {
  url: string;
  template: string;
  pgliteTemplate: string;
  cloneStrategy: string;
  /** the projects whose teardown has not run yet */
  users: number;
  stop(): Promise<void>;
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Creates the template database on `base` and applies the migrations to it. */
async function migratedTemplate(base: string, name: string): Promise<void> {
  await sql(base, `CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '' });
  try {
    await migrate(database);
  } finally {
    // A template database can only be copied while nobody is connected to it.
    await database.close();
  }
}

async function start(): Promise<Shared> {
  const template = `vdi_template_${randomBytes(4).toString('hex')}`;
  const external = process.env.TEST_DATABASE_URL;
  const cluster = external ? undefined : await startPostgres({ inMemory: true });
  const url = external ?? cluster?.url ?? '';
  await migratedTemplate(url, template);
  const pgliteTemplate = mkdtempSync(join(tmpdir(), 'vdi-pglite-template-'));
  return {
    url,
    template,
    pgliteTemplate,
    // In memory, copying the template's files costs less than writing its every page to the
    // write-ahead log (PostgreSQL's default); on disk, the checkpoints a file copy asks for cost more.
    cloneStrategy: cluster?.inMemory ? 'STRATEGY FILE_COPY' : '',
    users: 0,
    async stop() {
      rmSync(pgliteTemplate, { recursive: true, force: true });
      if (cluster) cluster.stop();
      // Someone else's cluster keeps its databases: drop this run's template there.
      else await sql(url, `DROP DATABASE IF EXISTS ${template}`);
    },
  };
}

// The server projects (plain and QEMU) share the cluster and the template: the first setup makes
// them, the last teardown removes them. Global setups all run in vitest's main process.
const shared = globalThis as { vdiTestPostgres?: Promise<Shared> };

export async function setup(project: TestProject) {
  shared.vdiTestPostgres ??= start();
  const run = await shared.vdiTestPostgres;
  run.users++;
  project.provide('databaseUrl', run.url);
  project.provide('templateDatabase', run.template);
  project.provide('pgliteTemplate', run.pgliteTemplate);
  project.provide('cloneStrategy', run.cloneStrategy);
}

export async function teardown() {
  const run = await shared.vdiTestPostgres;
  if (!run || --run.users > 0) return;
  shared.vdiTestPostgres = undefined;
  await run.stop();
}
