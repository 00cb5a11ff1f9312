ALTER TABLE "ldap_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "groups_at_each_login" boolean DEFAULT false NOT NULL;