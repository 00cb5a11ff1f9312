-- Leases: a name held by one process until expires_at (the database's clock); the holder renews it, and once it has expired any process may take it (the leader, a node's liveness, one desktop's disk being made).
CREATE TABLE IF NOT EXISTS "cluster_leases" (
	"name" text PRIMARY KEY,
	"holder" text NOT NULL,
	"expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
-- Background jobs: each runs on one process at a time (claimed with FOR UPDATE SKIP LOCKED and a lease the holder renews); a job whose holder stopped renewing is taken by another process. One job per key.
CREATE TABLE IF NOT EXISTS "cluster_jobs" (
	"id" bigserial PRIMARY KEY,
	"kind" text NOT NULL,
	"key" text NOT NULL UNIQUE,
	"payload" jsonb NOT NULL DEFAULT '{}'::jsonb,
	"holder" text,
	"lease_until" timestamptz,
	"run_after" timestamptz NOT NULL DEFAULT now(),
	"attempts" integer NOT NULL DEFAULT 0,
	"created_at" timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "cluster_jobs_kind_idx" ON "cluster_jobs" ("kind", "id");
--> statement-breakpoint
-- Slots of limited things counted across nodes (open consoles, running media downloads): a row per slot, held by a process that renews it; an expired row counts no more.
CREATE TABLE IF NOT EXISTS "cluster_slots" (
	"id" text PRIMARY KEY,
	"kind" text NOT NULL,
	"user_id" text NOT NULL,
	"item_id" text,
	"holder" text NOT NULL,
	"expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "cluster_slots_kind_idx" ON "cluster_slots" ("kind", "user_id");
--> statement-breakpoint
-- The keys tokens are signed with, shared by every node: the newest signs, every one listed verifies (a token names its key in the `kid` of its header).
CREATE TABLE IF NOT EXISTS "signing_keys" (
	"id" text PRIMARY KEY,
	"secret" text NOT NULL,
	"created_at" timestamptz NOT NULL DEFAULT now()
);
