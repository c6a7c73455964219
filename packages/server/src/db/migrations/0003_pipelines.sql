CREATE TABLE "data_source_bindings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"ref_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"bound_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "data_source_refs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"data_source_type" text,
	"required_capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_checkpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"step_slug" text NOT NULL,
	"cursor" text,
	"run_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_deployments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"spec_hash" text NOT NULL,
	"validation_id" uuid,
	"active" boolean DEFAULT true NOT NULL,
	"deployed_by_actor_type" text,
	"deployed_by_actor_slug" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_run_inputs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"run_id" uuid NOT NULL,
	"kid" text NOT NULL,
	"ciphertext" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pipeline_run_inputs_run_id_unique" UNIQUE("run_id")
);
--> statement-breakpoint
CREATE TABLE "pipeline_run_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"step_slug" text,
	"level" text NOT NULL,
	"message" text NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_run_steps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"step_slug" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"rows_in" bigint DEFAULT 0 NOT NULL,
	"rows_out" bigint DEFAULT 0 NOT NULL,
	"bytes_in" bigint DEFAULT 0 NOT NULL,
	"bytes_out" bigint DEFAULT 0 NOT NULL,
	"error" jsonb,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "pipeline_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"spec_hash" text NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"trigger" text DEFAULT 'api' NOT NULL,
	"input_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" jsonb,
	"attempt" integer DEFAULT 1 NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp (3) with time zone,
	"heartbeat_at" timestamp (3) with time zone,
	"cancel_requested_at" timestamp (3) with time zone,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_validations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"environment_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"spec_hash" text NOT NULL,
	"valid" boolean NOT NULL,
	"findings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_versions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"pipeline_id" uuid NOT NULL,
	"spec_hash" text NOT NULL,
	"spec" jsonb NOT NULL,
	"created_by_actor_type" text,
	"created_by_actor_slug" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipelines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "data_source_bindings" ADD CONSTRAINT "data_source_bindings_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_bindings" ADD CONSTRAINT "data_source_bindings_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_bindings" ADD CONSTRAINT "data_source_bindings_ref_id_data_source_refs_id_fk" FOREIGN KEY ("ref_id") REFERENCES "public"."data_source_refs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_bindings" ADD CONSTRAINT "data_source_bindings_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_bindings" ADD CONSTRAINT "data_source_bindings_data_source_id_data_sources_id_fk" FOREIGN KEY ("data_source_id") REFERENCES "public"."data_sources"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_refs" ADD CONSTRAINT "data_source_refs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "data_source_refs" ADD CONSTRAINT "data_source_refs_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_checkpoints" ADD CONSTRAINT "pipeline_checkpoints_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_checkpoints" ADD CONSTRAINT "pipeline_checkpoints_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_checkpoints" ADD CONSTRAINT "pipeline_checkpoints_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_checkpoints" ADD CONSTRAINT "pipeline_checkpoints_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_validation_id_pipeline_validations_id_fk" FOREIGN KEY ("validation_id") REFERENCES "public"."pipeline_validations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_run_inputs" ADD CONSTRAINT "pipeline_run_inputs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_run_inputs" ADD CONSTRAINT "pipeline_run_inputs_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" ADD CONSTRAINT "pipeline_run_logs_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_run_steps" ADD CONSTRAINT "pipeline_run_steps_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_validations" ADD CONSTRAINT "pipeline_validations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_validations" ADD CONSTRAINT "pipeline_validations_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_validations" ADD CONSTRAINT "pipeline_validations_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_versions" ADD CONSTRAINT "pipeline_versions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_versions" ADD CONSTRAINT "pipeline_versions_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "data_source_bindings_uq" ON "data_source_bindings" USING btree ("ref_id","environment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "data_source_refs_uq" ON "data_source_refs" USING btree ("pipeline_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_checkpoints_uq" ON "pipeline_checkpoints" USING btree ("pipeline_id","environment_id","step_slug");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_deployments_slug_uq" ON "pipeline_deployments" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE INDEX "pipeline_deployments_env_idx" ON "pipeline_deployments" USING btree ("pipeline_id","environment_id","created_at");--> statement-breakpoint
CREATE INDEX "pipeline_run_logs_run_idx" ON "pipeline_run_logs" USING btree ("run_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_run_steps_uq" ON "pipeline_run_steps" USING btree ("run_id","step_slug");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_runs_slug_uq" ON "pipeline_runs" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE INDEX "pipeline_runs_env_idx" ON "pipeline_runs" USING btree ("environment_id","created_at");--> statement-breakpoint
CREATE INDEX "pipeline_runs_lease_idx" ON "pipeline_runs" USING btree ("state","lease_expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_validations_slug_uq" ON "pipeline_validations" USING btree ("organization_id","slug");--> statement-breakpoint
CREATE INDEX "pipeline_validations_lookup_idx" ON "pipeline_validations" USING btree ("pipeline_id","environment_id","spec_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_versions_uq" ON "pipeline_versions" USING btree ("pipeline_id","spec_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "pipelines_project_slug_uq" ON "pipelines" USING btree ("project_id","slug");