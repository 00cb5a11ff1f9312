ALTER TABLE "hypervisors" ADD COLUMN "console_address" text DEFAULT '127.0.0.1' NOT NULL;--> statement-breakpoint
UPDATE "hypervisors" SET "console_address" = COALESCE(substring("uri" from '^[a-z+]+://(?:[^@/]*@)?([A-Za-z0-9.-]+)(?::[0-9]+)?/'), substring("uri" from '^[a-z+]+://(?:[^@/]*@)?\[([0-9A-Fa-f:.]+)\](?::[0-9]+)?/'), '127.0.0.1');
