/** A private PostgreSQL cluster for tests and benchmarks (see postgres.mjs). */
export interface PgCluster {
  url: string;
  /** Whether its files are in memory (a tmpfs), where copying a database file by file is cheap. */
  inMemory: boolean;
  /** Stops the cluster for good and removes its files. */
  stop: () => void;
  /** Stops the server (fast shutdown: open connections are cut), keeping its data. */
  halt: () => void;
  /** Starts a halted server again on the same port. */
  resume: () => void;
}

export declare function startPostgres(options?: {
  /** A test run's throwaway cluster: in memory when the machine has a tmpfs with room for it. */
  inMemory?: boolean;
}): Promise<PgCluster>;
/** A TCP port free on the loopback interface now. */
export declare function freePort(): Promise<number>;
