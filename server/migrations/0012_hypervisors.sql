CREATE TABLE "hypervisors" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"uri" text,
	"vcpus" integer DEFAULT 1 NOT NULL,
	"memory_mib" integer DEFAULT 1024 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"draining" boolean DEFAULT false NOT NULL,
	"gpu_profiles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"last_seen" timestamp with time zone,
	"ssh_key" text,
	CONSTRAINT "hypervisors_name_key" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "desktops" ADD COLUMN "forced_hyp" text;--> statement-breakpoint
ALTER TABLE "desktops" ADD CONSTRAINT "desktops_forced_hyp_hypervisors_id_fk" FOREIGN KEY ("forced_hyp") REFERENCES "public"."hypervisors"("id") ON DELETE set null ON UPDATE no action;