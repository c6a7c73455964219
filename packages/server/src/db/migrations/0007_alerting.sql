CREATE TABLE "alert_delivery_attempts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"notification_id" uuid NOT NULL,
	"delivery_id" uuid NOT NULL,
	"destination_id" uuid,
	"alert_policy_slug" text,
	"destination_slug" text,
	"destination_name" text,
	"destination_type" text NOT NULL,
	"reason" text NOT NULL,
	"held_back" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"provider_attempt" integer NOT NULL,
	"provider_response_metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error_category" text,
	"error_message" text,
	"queued_at" timestamp (3) with time zone NOT NULL,
	"sent_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_destination_windows" (
	"destination_id" uuid PRIMARY KEY NOT NULL,
	"window_start" timestamp (3) with time zone NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"held_back" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_destinations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"non_secret_config" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_policies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"scope" text NOT NULL,
	"project_slug" text,
	"environment_slug" text,
	"notification_type" text,
	"severity" text,
	"lifecycle_state" text,
	"source_kind" text,
	"source_action" text,
	"source_ref" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_policy_destinations" (
	"policy_id" uuid NOT NULL,
	"destination_id" uuid NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "alert_policy_destinations_policy_id_destination_id_pk" PRIMARY KEY("policy_id","destination_id")
);
--> statement-breakpoint
CREATE TABLE "alert_send_gates" (
	"notification_id" uuid NOT NULL,
	"destination_id" uuid NOT NULL,
	"last_seq" integer NOT NULL,
	"last_sent_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "alert_send_gates_notification_id_destination_id_pk" PRIMARY KEY("notification_id","destination_id")
);
--> statement-breakpoint
CREATE TABLE "notification_occurrences" (
	"notification_id" uuid NOT NULL,
	"source_key" text NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "notification_occurrences_notification_id_source_key_pk" PRIMARY KEY("notification_id","source_key")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"dedup_key" text NOT NULL,
	"notification_type" text NOT NULL,
	"severity" text NOT NULL,
	"lifecycle_state" text NOT NULL,
	"title" text NOT NULL,
	"summary" text NOT NULL,
	"project_slug" text,
	"environment_slug" text,
	"source_kind" text NOT NULL,
	"source_action" text NOT NULL,
	"source_refs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"occurrence_count" integer DEFAULT 1 NOT NULL,
	"reopen_count" integer DEFAULT 0 NOT NULL,
	"streak" integer DEFAULT 1 NOT NULL,
	"alert_seq" integer DEFAULT 1 NOT NULL,
	"first_seen_at" timestamp (3) with time zone NOT NULL,
	"last_seen_at" timestamp (3) with time zone NOT NULL,
	"acknowledged_at" timestamp (3) with time zone,
	"resolved_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "alert_delivery_attempts" ADD CONSTRAINT "alert_delivery_attempts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_delivery_attempts" ADD CONSTRAINT "alert_delivery_attempts_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_delivery_attempts" ADD CONSTRAINT "alert_delivery_attempts_destination_id_alert_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."alert_destinations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_destination_windows" ADD CONSTRAINT "alert_destination_windows_destination_id_alert_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."alert_destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD CONSTRAINT "alert_destinations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_policies" ADD CONSTRAINT "alert_policies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_policy_destinations" ADD CONSTRAINT "alert_policy_destinations_policy_id_alert_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."alert_policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_policy_destinations" ADD CONSTRAINT "alert_policy_destinations_destination_id_alert_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."alert_destinations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_send_gates" ADD CONSTRAINT "alert_send_gates_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_send_gates" ADD CONSTRAINT "alert_send_gates_destination_id_alert_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."alert_destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_occurrences" ADD CONSTRAINT "notification_occurrences_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alert_delivery_attempts_org_slug_uq" ON "alert_delivery_attempts" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "alert_delivery_attempts_try_uq" ON "alert_delivery_attempts" USING btree ("delivery_id","provider_attempt");--> statement-breakpoint
CREATE INDEX "alert_delivery_attempts_notification_idx" ON "alert_delivery_attempts" USING btree ("notification_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "alert_destinations_org_slug_uq" ON "alert_destinations" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "alert_policies_org_slug_uq" ON "alert_policies" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE INDEX "alert_policy_destinations_dest_idx" ON "alert_policy_destinations" USING btree ("destination_id");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_org_slug_uq" ON "notifications" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_org_dedup_uq" ON "notifications" USING btree ("organization_id","dedup_key");--> statement-breakpoint
CREATE INDEX "notifications_org_seen_idx" ON "notifications" USING btree ("organization_id","last_seen_at");