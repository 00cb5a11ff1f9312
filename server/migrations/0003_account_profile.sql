CREATE TABLE "user_migrations" (
	"id" text PRIMARY KEY NOT NULL,
	"origin_user_id" text NOT NULL,
	"target_user_id" text,
	"token_jti" text NOT NULL,
	"status" text DEFAULT 'exported' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"import_time" timestamp with time zone,
	"result" jsonb,
	CONSTRAINT "user_migrations_token_jti_key" UNIQUE("token_jti"),
	CONSTRAINT "user_migrations_status_check" CHECK (status IN ('exported', 'imported', 'migrating', 'migrated', 'failed', 'revoked'))
);
--> statement-breakpoint
ALTER TABLE "groups" ADD COLUMN "enrollment" jsonb;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_history" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verification_jti" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_reset_jti" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "api_key_hash" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "api_key_expires" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "wg_private_key" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "wg_public_key" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "wg_address" text;--> statement-breakpoint
ALTER TABLE "user_migrations" ADD CONSTRAINT "user_migrations_origin_user_id_users_id_fk" FOREIGN KEY ("origin_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_migrations" ADD CONSTRAINT "user_migrations_target_user_id_users_id_fk" FOREIGN KEY ("target_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "user_migrations_origin_user_id_key" ON "user_migrations" USING btree ("origin_user_id");--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_wg_address_key" UNIQUE("wg_address");