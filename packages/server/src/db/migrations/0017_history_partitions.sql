-- History that grows without bound (docs/operations.md#history-partitions): events become
-- range-partitioned by occurred_at (a week each), run log lines by at (a month each), each with
-- a default partition for stragglers; retention drops whole partitions. Existing rows are copied
-- into the partitioned tables with their ids. The runs list gets one index per filter, each
-- ending in the list's order (created_at, slug), so a page stops after limit + 1 rows.
DROP INDEX "pipeline_runs_env_idx";--> statement-breakpoint
CREATE INDEX "pipeline_runs_env_idx" ON "pipeline_runs" USING btree ("environment_id","created_at","slug");--> statement-breakpoint
CREATE INDEX "pipeline_runs_pipeline_idx" ON "pipeline_runs" USING btree ("pipeline_id","environment_id","created_at","slug");--> statement-breakpoint
CREATE INDEX "pipeline_runs_state_idx" ON "pipeline_runs" USING btree ("environment_id","state","created_at","slug");--> statement-breakpoint
CREATE INDEX "pipeline_runs_trigger_idx" ON "pipeline_runs" USING btree ("environment_id","trigger","created_at","slug");--> statement-breakpoint
CREATE INDEX "pipeline_runs_trigger_slug_idx" ON "pipeline_runs" USING btree ("environment_id","trigger_slug","created_at","slug");--> statement-breakpoint
ALTER TABLE "events" RENAME TO "events_unpartitioned";--> statement-breakpoint
ALTER TABLE "events_unpartitioned" RENAME CONSTRAINT "events_pkey" TO "events_unpartitioned_pkey";--> statement-breakpoint
ALTER INDEX "events_slug_uq" RENAME TO "events_unpartitioned_slug_uq";--> statement-breakpoint
ALTER INDEX "events_list_idx" RENAME TO "events_unpartitioned_list_idx";--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"schema_version" integer DEFAULT 1 NOT NULL,
	"event_class" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_slug" text,
	"entity_type" text NOT NULL,
	"entity_slug" text,
	"action" text NOT NULL,
	"request_id" text,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_pkey" PRIMARY KEY("id","occurred_at")
) PARTITION BY RANGE ("occurred_at");--> statement-breakpoint
ALTER TABLE "events_unpartitioned" DROP CONSTRAINT "events_organization_id_organizations_id_fk";--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_slug_uq" ON "events" USING btree ("slug","occurred_at");--> statement-breakpoint
CREATE INDEX "events_list_idx" ON "events" USING btree ("organization_id","event_class","occurred_at","slug");--> statement-breakpoint
CREATE INDEX "events_entity_idx" ON "events" USING btree ("organization_id","entity_slug","occurred_at");--> statement-breakpoint
CREATE INDEX "events_request_idx" ON "events" USING btree ("organization_id","request_id");--> statement-breakpoint
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" RENAME TO "pipeline_run_logs_unpartitioned";--> statement-breakpoint
ALTER TABLE "pipeline_run_logs_unpartitioned" RENAME CONSTRAINT "pipeline_run_logs_pkey" TO "pipeline_run_logs_unpartitioned_pkey";--> statement-breakpoint
ALTER INDEX "pipeline_run_logs_run_seq_idx" RENAME TO "pipeline_run_logs_unpartitioned_run_seq_idx";--> statement-breakpoint
ALTER TABLE "pipeline_run_logs_unpartitioned" DROP CONSTRAINT "pipeline_run_logs_run_id_pipeline_runs_id_fk";--> statement-breakpoint
-- The id sequence carries on: ids stay as they were and new lines number on from the last one.
CREATE TABLE "pipeline_run_logs" (
	"id" bigint DEFAULT nextval('pipeline_run_logs_id_seq') NOT NULL,
	"run_id" uuid NOT NULL,
	"step_slug" text,
	"level" text NOT NULL,
	"message" text NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"seq" integer NOT NULL,
	CONSTRAINT "pipeline_run_logs_pkey" PRIMARY KEY("id","at")
) PARTITION BY RANGE ("at");--> statement-breakpoint
ALTER SEQUENCE "pipeline_run_logs_id_seq" OWNED BY "pipeline_run_logs"."id";--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" ADD CONSTRAINT "pipeline_run_logs_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_run_logs_run_seq_idx" ON "pipeline_run_logs" USING btree ("run_id","seq","at");--> statement-breakpoint
CREATE TABLE "pipeline_run_logs_default" PARTITION OF "pipeline_run_logs" DEFAULT;--> statement-breakpoint
-- Partitions from the oldest kept row (or now) to one week / one month ahead; names carry the
-- first day.
DO $$
DECLARE
  t record;
  d timestamp;
  stop timestamp;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('events', 'occurred_at', 'week', 2), ('pipeline_run_logs', 'at', 'month', 2))
                         AS v(tbl, col, unit, ahead) LOOP
    EXECUTE format('SELECT date_trunc(%L, coalesce(min(%I), now()) AT TIME ZONE ''UTC'') FROM %I',
                   t.unit, t.col, t.tbl || '_unpartitioned') INTO d;
    stop := date_trunc(t.unit, now() AT TIME ZONE 'UTC') + (t.ahead || ' ' || t.unit)::interval;
    WHILE d < stop LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        t.tbl || '_p' || to_char(d, 'YYYYMMDD'), t.tbl, d AT TIME ZONE 'UTC', (d + ('1 ' || t.unit)::interval) AT TIME ZONE 'UTC');
      d := d + ('1 ' || t.unit)::interval;
    END LOOP;
  END LOOP;
END $$;--> statement-breakpoint
INSERT INTO "events" ("id","organization_id","slug","schema_version","event_class","actor_type","actor_slug","entity_type","entity_slug","action","request_id","occurred_at","metadata","created_at")
  SELECT "id","organization_id","slug","schema_version","event_class","actor_type","actor_slug","entity_type","entity_slug","action","request_id","occurred_at","metadata","created_at" FROM "events_unpartitioned";--> statement-breakpoint
DROP TABLE "events_unpartitioned";--> statement-breakpoint
INSERT INTO "pipeline_run_logs" ("id","run_id","step_slug","level","message","at","seq")
  SELECT "id","run_id","step_slug","level","message","at","seq" FROM "pipeline_run_logs_unpartitioned";--> statement-breakpoint
DROP TABLE "pipeline_run_logs_unpartitioned";
