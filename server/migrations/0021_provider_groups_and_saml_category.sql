ALTER TABLE "ldap_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "category_attribute" text;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "category_regex" text;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "registration_code_required" boolean DEFAULT false NOT NULL;