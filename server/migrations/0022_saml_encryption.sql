ALTER TABLE "saml_providers" ADD COLUMN "sp_encryption_certificate" text;--> statement-breakpoint
ALTER TABLE "saml_providers" ADD COLUMN "sp_encryption_private_key" text;