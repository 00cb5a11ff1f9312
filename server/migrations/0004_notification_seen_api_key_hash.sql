CREATE TABLE "notification_seen" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"notification_id" text NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "notification_seen" ADD CONSTRAINT "notification_seen_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "notification_seen_user_notification_key" ON "notification_seen" USING btree ("user_id","notification_id");--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_api_key_hash_key" UNIQUE("api_key_hash");