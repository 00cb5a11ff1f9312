CREATE TABLE "portal_nodes" (
	"name" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"version" text NOT NULL,
	"address" text NOT NULL,
	"beat_at" timestamp with time zone NOT NULL,
	"holder" text NOT NULL
);
