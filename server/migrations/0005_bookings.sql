CREATE TABLE "booking_priorities" (
	"id" text PRIMARY KEY NOT NULL,
	"rule_id" text DEFAULT 'default' NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"allowed" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"forbid_time" integer DEFAULT 0 NOT NULL,
	"max_time" integer,
	"max_items" integer,
	"max_booking_days" integer
);
--> statement-breakpoint
CREATE TABLE "bookings" (
	"id" text PRIMARY KEY NOT NULL,
	"item_id" text NOT NULL,
	"item_type" text NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"start_at" timestamp with time zone NOT NULL,
	"end_at" timestamp with time zone NOT NULL,
	"units" integer DEFAULT 1 NOT NULL,
	"user_id" text NOT NULL,
	"reservables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"profile_id" text NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"phase" text DEFAULT 'scheduled' NOT NULL,
	"notices" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "bookings_item_type_check" CHECK (item_type IN ('desktop', 'deployment')),
	CONSTRAINT "bookings_phase_check" CHECK (phase IN ('scheduled', 'active', 'ended'))
);
--> statement-breakpoint
CREATE TABLE "planner_events" (
	"id" text PRIMARY KEY NOT NULL,
	"item_type" text DEFAULT 'gpus' NOT NULL,
	"item_id" text NOT NULL,
	"subitem_id" text NOT NULL,
	"units" integer DEFAULT 1 NOT NULL,
	"start_at" timestamp with time zone NOT NULL,
	"end_at" timestamp with time zone NOT NULL,
	"user_id" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "planner_events_item_type_check" CHECK (item_type IN ('gpus'))
);
--> statement-breakpoint
CREATE TABLE "reservable_items" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"model" text,
	"brand" text,
	"description" text,
	"type" text DEFAULT 'gpus' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	CONSTRAINT "reservable_items_type_check" CHECK (type IN ('gpus'))
);
--> statement-breakpoint
CREATE TABLE "reservable_profiles" (
	"id" text PRIMARY KEY NOT NULL,
	"item_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"profile" text NOT NULL,
	"units" integer DEFAULT 1 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"allowed" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"priority_id" text DEFAULT 'default' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "desktops" ADD COLUMN "next_booking_start" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "desktops" ADD COLUMN "next_booking_end" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_profile_id_reservable_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."reservable_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "planner_events" ADD CONSTRAINT "planner_events_item_id_reservable_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."reservable_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "planner_events" ADD CONSTRAINT "planner_events_subitem_id_reservable_profiles_id_fk" FOREIGN KEY ("subitem_id") REFERENCES "public"."reservable_profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "planner_events" ADD CONSTRAINT "planner_events_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservable_profiles" ADD CONSTRAINT "reservable_profiles_item_id_reservable_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."reservable_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "booking_priorities_rule_id_idx" ON "booking_priorities" USING btree ("rule_id");--> statement-breakpoint
CREATE INDEX "bookings_profile_id_end_at_idx" ON "bookings" USING btree ("profile_id","end_at");--> statement-breakpoint
CREATE INDEX "bookings_item_id_end_at_idx" ON "bookings" USING btree ("item_id","end_at");--> statement-breakpoint
CREATE INDEX "bookings_user_id_end_at_idx" ON "bookings" USING btree ("user_id","end_at");--> statement-breakpoint
CREATE INDEX "bookings_phase_idx" ON "bookings" USING btree ("phase") WHERE phase <> 'ended';--> statement-breakpoint
CREATE INDEX "planner_events_item_id_start_at_idx" ON "planner_events" USING btree ("item_id","start_at");--> statement-breakpoint
CREATE INDEX "planner_events_subitem_id_end_at_idx" ON "planner_events" USING btree ("subitem_id","end_at");--> statement-breakpoint
CREATE INDEX "reservable_profiles_item_id_idx" ON "reservable_profiles" USING btree ("item_id");