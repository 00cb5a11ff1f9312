CREATE TABLE "oidc_logins" (
	"state" text PRIMARY KEY NOT NULL,
	"category_id" text NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"redirect" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oidc_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"category_id" text NOT NULL,
	"label" text NOT NULL,
	"icon" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" text DEFAULT 'openid profile email' NOT NULL,
	"claim_username" text DEFAULT 'preferred_username' NOT NULL,
	"claim_name" text DEFAULT 'name' NOT NULL,
	"claim_email" text DEFAULT 'email',
	"claim_groups" text,
	"claim_photo" text DEFAULT 'picture',
	"allowed_domains" text,
	"group_id" text NOT NULL,
	"role" text DEFAULT 'user' NOT NULL,
	"client_secret" text,
	CONSTRAINT "oidc_providers_category_id_key" UNIQUE("category_id")
);
--> statement-breakpoint
ALTER TABLE "oidc_logins" ADD CONSTRAINT "oidc_logins_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD CONSTRAINT "oidc_providers_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD CONSTRAINT "oidc_providers_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE restrict ON UPDATE no action;