CREATE TABLE "oidc_id_tokens" (
	"user_id" text PRIMARY KEY NOT NULL,
	"id_token" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ldap_providers" ADD COLUMN "category_attribute" text;--> statement-breakpoint
ALTER TABLE "ldap_providers" ADD COLUMN "category_regex" text;--> statement-breakpoint
ALTER TABLE "ldap_providers" ADD COLUMN "registration_code_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD COLUMN "category_attribute" text;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD COLUMN "category_regex" text;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD COLUMN "registration_code_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_id_tokens" ADD CONSTRAINT "oidc_id_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;