DROP INDEX "pipeline_run_logs_run_idx";--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" ADD COLUMN "seq" integer;--> statement-breakpoint
UPDATE "pipeline_run_logs" l SET "seq" = n.seq
  FROM (SELECT "id", row_number() OVER (PARTITION BY "run_id" ORDER BY "id") AS seq FROM "pipeline_run_logs") n
 WHERE n."id" = l."id";--> statement-breakpoint
ALTER TABLE "pipeline_run_logs" ALTER COLUMN "seq" SET NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_run_logs_run_seq_idx" ON "pipeline_run_logs" USING btree ("run_id","seq");
