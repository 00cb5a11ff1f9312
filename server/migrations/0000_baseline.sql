CREATE TABLE "categories" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"custom_url_name" text,
	"photo" text,
	"frontend" boolean DEFAULT true NOT NULL,
	"maintenance" boolean DEFAULT false NOT NULL,
	"quota" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "categories_custom_url_name_key" UNIQUE("custom_url_name")
);
--> statement-breakpoint
CREATE TABLE "desktops" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"state" text DEFAULT 'stopped' NOT NULL,
	"type" text DEFAULT 'persistent' NOT NULL,
	"template_id" text,
	"scheduled" jsonb DEFAULT '{"shutdown":false}'::jsonb NOT NULL,
	"server" boolean DEFAULT false NOT NULL,
	"accessed" timestamp with time zone DEFAULT now() NOT NULL,
	"tag" text,
	"visible" boolean DEFAULT true NOT NULL,
	"user_id" text NOT NULL,
	"current_action" text,
	"booking_id" text,
	"queue" jsonb,
	"detail" text,
	"version" integer DEFAULT 1 NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"hardware" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"guest_properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"runtime" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"disk_path" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "desktops_type_check" CHECK (type IN ('persistent', 'nonpersistent'))
);
--> statement-breakpoint
CREATE TABLE "groups" (
	"id" text PRIMARY KEY NOT NULL,
	"category_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"quota" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "login_attempts" (
	"key" text PRIMARY KEY NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	"window_start" timestamp with time zone DEFAULT now() NOT NULL,
	"retry_after" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"kind" text NOT NULL,
	"url" text,
	"status" text DEFAULT 'downloaded' NOT NULL,
	"progress" jsonb,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"allowed" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"path" text,
	"size" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "media_kind_check" CHECK (kind IN ('iso', 'floppy'))
);
--> statement-breakpoint
CREATE TABLE "recycle_bin" (
	"id" text PRIMARY KEY NOT NULL,
	"accessed" timestamp with time zone DEFAULT now() NOT NULL,
	"item_type" text NOT NULL,
	"item_name" text NOT NULL,
	"agent_id" text,
	"owner_id" text NOT NULL,
	"status" text DEFAULT 'recycled' NOT NULL,
	"size" bigint DEFAULT 0 NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"max_renew_at" timestamp with time zone NOT NULL,
	"max_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"remote_addr" text
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "templates" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"user_id" text NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"allowed" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"hardware" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"guest_properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"disk_path" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"uid" text NOT NULL,
	"username" text NOT NULL,
	"name" text NOT NULL,
	"provider" text DEFAULT 'local' NOT NULL,
	"category_id" text NOT NULL,
	"group_id" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text,
	"password_reset_required" boolean DEFAULT false NOT NULL,
	"password_last_updated" timestamp with time zone,
	"active" boolean DEFAULT true NOT NULL,
	"email" text,
	"email_verified" boolean DEFAULT false NOT NULL,
	"lang" text,
	"photo" text,
	"quota" jsonb,
	"accessed" timestamp with time zone,
	"disclaimer_acknowledged" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_role_check" CHECK (role IN ('admin', 'manager', 'advanced', 'user'))
);
--> statement-breakpoint
ALTER TABLE "desktops" ADD CONSTRAINT "desktops_template_id_templates_id_fk" FOREIGN KEY ("template_id") REFERENCES "public"."templates"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktops" ADD CONSTRAINT "desktops_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktops" ADD CONSTRAINT "desktops_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "desktops" ADD CONSTRAINT "desktops_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "groups" ADD CONSTRAINT "groups_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recycle_bin" ADD CONSTRAINT "recycle_bin_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "templates" ADD CONSTRAINT "templates_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "desktops_user_id_name_key" ON "desktops" USING btree ("user_id","name");--> statement-breakpoint
CREATE INDEX "desktops_user_name_idx" ON "desktops" USING btree ("user_id","name");--> statement-breakpoint
CREATE INDEX "desktops_state_idx" ON "desktops" USING btree ("state");--> statement-breakpoint
CREATE INDEX "desktops_tag_idx" ON "desktops" USING btree ("tag") WHERE tag IS NOT NULL;--> statement-breakpoint
CREATE INDEX "media_user_idx" ON "media" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "recycle_bin_owner_idx" ON "recycle_bin" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_provider_category_id_uid_key" ON "users" USING btree ("provider","category_id","uid");