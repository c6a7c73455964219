CREATE TABLE "pipeline_trigger_occurrences" (
	"trigger_id" uuid NOT NULL,
	"nominal_at" timestamp (3) with time zone NOT NULL,
	"fire_at" timestamp (3) with time zone NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"run_id" uuid,
	"slug" text NOT NULL,
	"recorded_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pipeline_trigger_occurrences_trigger_id_nominal_at_pk" PRIMARY KEY("trigger_id","nominal_at")
);
--> statement-breakpoint
CREATE TABLE "pipeline_trigger_secrets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"trigger_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"prefix" text NOT NULL,
	"kid" text NOT NULL,
	"ciphertext" text NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"last_verified_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_triggers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"kind" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"pause_note" text,
	"cron" text,
	"time_zone" text,
	"overlap" text,
	"catch_up_policy" text,
	"catch_up_window_seconds" integer,
	"catch_up_max_runs" integer,
	"jitter_seconds" integer,
	"start_at" timestamp (3) with time zone,
	"end_at" timestamp (3) with time zone,
	"cursor_nominal_at" timestamp (3) with time zone,
	"next_fire_at" timestamp (3) with time zone,
	"buffered_nominal_at" timestamp (3) with time zone,
	"input_mapping" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"trigger_id" uuid NOT NULL,
	"delivery_id" text NOT NULL,
	"body_sha256" text NOT NULL,
	"input_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"outcome" text NOT NULL,
	"run_id" uuid,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD COLUMN "trigger_id" uuid;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD COLUMN "trigger_slug" text;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD COLUMN "trigger_key" text;--> statement-breakpoint
ALTER TABLE "pipeline_trigger_occurrences" ADD CONSTRAINT "pipeline_trigger_occurrences_trigger_id_pipeline_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."pipeline_triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_trigger_occurrences" ADD CONSTRAINT "pipeline_trigger_occurrences_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_trigger_secrets" ADD CONSTRAINT "pipeline_trigger_secrets_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_trigger_secrets" ADD CONSTRAINT "pipeline_trigger_secrets_trigger_id_pipeline_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."pipeline_triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_triggers" ADD CONSTRAINT "pipeline_triggers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_triggers" ADD CONSTRAINT "pipeline_triggers_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_triggers" ADD CONSTRAINT "pipeline_triggers_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_trigger_id_pipeline_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."pipeline_triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pipeline_trigger_secrets_trigger_idx" ON "pipeline_trigger_secrets" USING btree ("trigger_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_triggers_place_slug_uq" ON "pipeline_triggers" USING btree ("pipeline_id","environment_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_triggers_webhook_slug_uq" ON "pipeline_triggers" USING btree ("slug") WHERE kind = 'webhook';--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_triggers_org_slug_uq" ON "pipeline_triggers" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE INDEX "pipeline_triggers_due_idx" ON "pipeline_triggers" USING btree ("next_fire_at") WHERE kind = 'schedule' and enabled;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_uq" ON "webhook_deliveries" USING btree ("trigger_id","delivery_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_runs_trigger_key_uq" ON "pipeline_runs" USING btree ("trigger_id","trigger_key");