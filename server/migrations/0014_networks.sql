CREATE TABLE "networks" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"kind" text NOT NULL,
	"bridge" text NOT NULL,
	"subnet" text NOT NULL,
	"allowed" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "networks_name_key" UNIQUE("name"),
	CONSTRAINT "networks_bridge_key" UNIQUE("bridge"),
	CONSTRAINT "networks_subnet_key" UNIQUE("subnet"),
	CONSTRAINT "networks_kind_check" CHECK (kind IN ('nat', 'isolated', 'vpn'))
);
