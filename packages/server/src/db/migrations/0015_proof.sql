CREATE TABLE "proof_candidates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"repository_id" text NOT NULL,
	"commit_sha" text NOT NULL,
	"ref" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "proof_observations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"candidate_id" uuid,
	"requested_commit" text,
	"requested_ref" text,
	"repository_id" text,
	"commit_sha" text,
	"tree_sha" text,
	"state" text NOT NULL,
	"targets" jsonb NOT NULL,
	"results" jsonb,
	"inputs" jsonb,
	"error" jsonb,
	"digest" text,
	"observed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "proof_receipts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"candidate_id" uuid NOT NULL,
	"sequence" integer NOT NULL,
	"verdict" text NOT NULL,
	"observation_slugs" jsonb NOT NULL,
	"envelope" jsonb NOT NULL,
	"digest" text NOT NULL,
	"prev_receipt_digest" text,
	"check" jsonb,
	"compiled_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "proof_settings" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"data_source_id" uuid NOT NULL,
	"enabled" boolean NOT NULL,
	"publish_checks" boolean NOT NULL,
	"expected_repository_id" text NOT NULL,
	"targets" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "proof_signing_keys" (
	"keyid" text PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"kid" text NOT NULL,
	"sealed_private_key" text NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "proof_candidates" ADD CONSTRAINT "proof_candidates_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_candidates" ADD CONSTRAINT "proof_candidates_data_source_id_data_sources_id_fk" FOREIGN KEY ("data_source_id") REFERENCES "public"."data_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_observations" ADD CONSTRAINT "proof_observations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_observations" ADD CONSTRAINT "proof_observations_data_source_id_data_sources_id_fk" FOREIGN KEY ("data_source_id") REFERENCES "public"."data_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_observations" ADD CONSTRAINT "proof_observations_candidate_id_proof_candidates_id_fk" FOREIGN KEY ("candidate_id") REFERENCES "public"."proof_candidates"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_receipts" ADD CONSTRAINT "proof_receipts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_receipts" ADD CONSTRAINT "proof_receipts_data_source_id_data_sources_id_fk" FOREIGN KEY ("data_source_id") REFERENCES "public"."data_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_receipts" ADD CONSTRAINT "proof_receipts_candidate_id_proof_candidates_id_fk" FOREIGN KEY ("candidate_id") REFERENCES "public"."proof_candidates"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_settings" ADD CONSTRAINT "proof_settings_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proof_settings" ADD CONSTRAINT "proof_settings_data_source_id_data_sources_id_fk" FOREIGN KEY ("data_source_id") REFERENCES "public"."data_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "proof_candidates_slug_uq" ON "proof_candidates" USING btree ("data_source_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "proof_candidates_commit_uq" ON "proof_candidates" USING btree ("data_source_id","repository_id","commit_sha");--> statement-breakpoint
CREATE UNIQUE INDEX "proof_observations_slug_uq" ON "proof_observations" USING btree ("data_source_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "proof_receipts_slug_uq" ON "proof_receipts" USING btree ("data_source_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "proof_receipts_chain_uq" ON "proof_receipts" USING btree ("data_source_id","sequence");--> statement-breakpoint
CREATE UNIQUE INDEX "proof_settings_ds_uq" ON "proof_settings" USING btree ("data_source_id");