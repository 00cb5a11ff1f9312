CREATE TABLE "saml_assertions" (
	"key" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saml_logins" (
	"relay_state" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"request_id" text NOT NULL,
	"redirect" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saml_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"category_id" text NOT NULL,
	"label" text NOT NULL,
	"icon" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"idp_entity_id" text NOT NULL,
	"idp_metadata_url" text,
	"idp_metadata" text NOT NULL,
	"idp_slo" boolean DEFAULT false NOT NULL,
	"sp_entity_id" text NOT NULL,
	"sp_certificate" text,
	"attr_username" text,
	"attr_name" text DEFAULT 'displayName',
	"attr_email" text DEFAULT 'mail',
	"attr_groups" text,
	"group_id" text NOT NULL,
	"role" text DEFAULT 'user' NOT NULL,
	"sp_private_key" text,
	CONSTRAINT "saml_providers_category_id_key" UNIQUE("category_id")
);
--> statement-breakpoint
ALTER TABLE "saml_logins" ADD CONSTRAINT "saml_logins_provider_id_saml_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."saml_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD CONSTRAINT "saml_providers_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD CONSTRAINT "saml_providers_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE restrict ON UPDATE no action;