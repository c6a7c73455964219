-- A run's log is read by the run's slug (docs/scaling.md#run-logs): the lookup takes the run's id,
-- place and time bounds from this index alone, an index-only scan once the run's page is
-- all-visible (every ended run's, after vacuum), instead of one page of the runs table per read.
-- Same key and uniqueness as before (ON CONFLICT on organization_id, slug still infers it); the
-- new index is built before the old one is dropped, so the key is never unenforced.
CREATE UNIQUE INDEX "pipeline_runs_slug_include_uq" ON "pipeline_runs" USING btree ("organization_id","slug") INCLUDE ("id","environment_id","pipeline_id","created_at","finished_at");--> statement-breakpoint
DROP INDEX "pipeline_runs_slug_uq";--> statement-breakpoint
ALTER INDEX "pipeline_runs_slug_include_uq" RENAME TO "pipeline_runs_slug_uq";
