ALTER TABLE "templates" ADD COLUMN "status" text DEFAULT 'ready' NOT NULL;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "detail" text;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "progress" jsonb;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "desktop_size" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "parent_id" text;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "duplicate_of" text;--> statement-breakpoint
ALTER TABLE "templates" ADD COLUMN "source_desktop_id" text;--> statement-breakpoint
CREATE INDEX "templates_user_name_idx" ON "templates" USING btree ("user_id","name");--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_status_check" CHECK (status IN ('creating', 'ready', 'failed'));