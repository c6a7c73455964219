-- A run's log lines are stored in batches (docs/operations.md#run-logs): one row holds up to 500
-- consecutive lines of one run, numbered `seq` to `last_seq`, each line an array
-- [step_slug, level, message, milliseconds after the row's `at`] in `lines`. Still range-partitioned
-- by `at` (now the batch's first line's time), a month a partition. Existing lines are grouped
-- into rows of up to 500 consecutive numbers of one run, keeping their numbers, times and text.
CREATE TABLE "pipeline_run_logs_batched" AS
  SELECT "run_id", min("seq")::int AS "seq", max("seq")::int AS "last_seq", min("at") AS "at",
         jsonb_agg(jsonb_build_array("step_slug", "level", "message",
                                     round(extract(epoch FROM "at" - "t0") * 1000)::bigint) ORDER BY "seq") AS "lines"
    FROM (SELECT *, min("at") OVER (PARTITION BY "run_id", "island", ("rn" - 1) / 500) AS "t0"
            FROM (SELECT *, "seq" - row_number() OVER (PARTITION BY "run_id" ORDER BY "seq", "at") AS "island",
                         row_number() OVER (PARTITION BY "run_id" ORDER BY "seq", "at") AS "rn"
                    FROM "pipeline_run_logs") n) g
   GROUP BY "run_id", "island", ("rn" - 1) / 500;--> statement-breakpoint
DROP TABLE "pipeline_run_logs";--> statement-breakpoint
CREATE TABLE "pipeline_run_logs" (
	"run_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"last_seq" integer NOT NULL,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"lines" jsonb NOT NULL,
	CONSTRAINT "pipeline_run_logs_pkey" PRIMARY KEY("run_id","seq","at"),
	CONSTRAINT "pipeline_run_logs_batch" CHECK ("pipeline_run_logs"."last_seq" >= "pipeline_run_logs"."seq" and "pipeline_run_logs"."last_seq" - "pipeline_run_logs"."seq" < 500 and jsonb_array_length("pipeline_run_logs"."lines") = "pipeline_run_logs"."last_seq" - "pipeline_run_logs"."seq" + 1)
) PARTITION BY RANGE ("at");--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" ADD CONSTRAINT "pipeline_run_logs_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "pipeline_run_logs_default" PARTITION OF "pipeline_run_logs" DEFAULT;--> statement-breakpoint
-- The months from the oldest kept line (or now) to two months ahead, named after their first day
-- as migration 0017 named them.
DO $$
DECLARE
  d timestamp;
  stop timestamp;
BEGIN
  SELECT date_trunc('month', coalesce(min("at"), now()) AT TIME ZONE 'UTC') FROM "pipeline_run_logs_batched" INTO d;
  stop := date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 month';
  WHILE d < stop LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "pipeline_run_logs" FOR VALUES FROM (%L) TO (%L)',
      'pipeline_run_logs_p' || to_char(d, 'YYYYMMDD'), d AT TIME ZONE 'UTC', (d + interval '1 month') AT TIME ZONE 'UTC');
    d := d + interval '1 month';
  END LOOP;
END $$;--> statement-breakpoint
INSERT INTO "pipeline_run_logs" ("run_id","seq","last_seq","at","lines")
  SELECT "run_id","seq","last_seq","at","lines" FROM "pipeline_run_logs_batched";--> statement-breakpoint
DROP TABLE "pipeline_run_logs_batched";
--> statement-breakpoint
-- The lines one a row, for reading a log in SQL (docs/operations.md#run-logs).
CREATE VIEW "pipeline_run_log_lines" AS
  SELECT b."run_id", (b."seq" + e.n - 1)::int AS "seq", e.v->>0 AS "step_slug", e.v->>1 AS "level",
         e.v->>2 AS "message", b."at" + (e.v->>3)::bigint * interval '1 millisecond' AS "at"
    FROM "pipeline_run_logs" b CROSS JOIN LATERAL jsonb_array_elements(b."lines") WITH ORDINALITY AS e(v, n);
