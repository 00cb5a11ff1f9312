CREATE TABLE "bastion_targets" (
	"id" text PRIMARY KEY NOT NULL,
	"desktop_id" text NOT NULL,
	"user_id" text NOT NULL,
	"domain" text,
	"http" jsonb NOT NULL,
	"ssh" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "bastion_targets_desktop_id_key" UNIQUE("desktop_id"),
	CONSTRAINT "bastion_targets_domain_key" UNIQUE("domain")
);
--> statement-breakpoint
ALTER TABLE "bastion_targets" ADD CONSTRAINT "bastion_targets_desktop_id_desktops_id_fk" FOREIGN KEY ("desktop_id") REFERENCES "public"."desktops"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bastion_targets" ADD CONSTRAINT "bastion_targets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bastion_targets_user_idx" ON "bastion_targets" USING btree ("user_id");