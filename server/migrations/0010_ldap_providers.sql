CREATE TABLE "ldap_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"category_id" text NOT NULL,
	"label" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"url" text NOT NULL,
	"starttls" boolean DEFAULT false NOT NULL,
	"bind_dn" text NOT NULL,
	"search_base" text NOT NULL,
	"filter" text NOT NULL,
	"attr_username" text DEFAULT 'uid' NOT NULL,
	"attr_name" text DEFAULT 'cn' NOT NULL,
	"attr_email" text,
	"attr_groups" text,
	"attr_photo" text,
	"group_id" text NOT NULL,
	"role" text DEFAULT 'user' NOT NULL,
	"bind_password" text,
	CONSTRAINT "ldap_providers_category_id_key" UNIQUE("category_id")
);
--> statement-breakpoint
ALTER TABLE "ldap_providers" ADD CONSTRAINT "ldap_providers_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ldap_providers" ADD CONSTRAINT "ldap_providers_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE restrict ON UPDATE no action;