-- The live portal nodes (the admins' list, adminNodes): each node writes its row at every beat while it holds its node lease and removes it when it closes; a row is listed while its node's lease lives, and the leader deletes the rows of dead nodes. holder is the process holding the node's leases (what it leads, its jobs and leases are read through it).
CREATE TABLE "portal_nodes" (
	"name" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"version" text NOT NULL,
	"address" text NOT NULL,
	"beat_at" timestamp with time zone NOT NULL,
	"holder" text NOT NULL
);
