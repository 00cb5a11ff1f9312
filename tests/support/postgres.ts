/**
 * A private PostgreSQL cluster for tests and benchmarks: initdb + pg_ctl as the postgres user in a
 * temp dir (under a second), on a free loopback port. Plain JavaScript in scripts/lib, since
 * `npm test` itself starts one for the end-to-end portals.
 */
export { startPostgres, type PgCluster } from '../../scripts/lib/postgres.mjs';
