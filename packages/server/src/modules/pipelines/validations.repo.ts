import { and, desc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelines, pipelineValidations } from '../../db/schema/index';

export type ValidationRow = typeof pipelineValidations.$inferSelect;

export async function insertValidation(db: DbOrTx, values: typeof pipelineValidations.$inferInsert) {
  const [row] = await db.insert(pipelineValidations).values(values).returning();
  return row;
}

/** A validation of the project's pipelines in one environment, with its pipeline's slug. */
export async function findValidation(db: DbOrTx, projectId: string, environmentId: string, slug: string) {
  const [row] = await db
    .select({ validation: pipelineValidations, pipelineSlug: pipelines.slug })
    .from(pipelineValidations)
    .innerJoin(pipelines, eq(pipelines.id, pipelineValidations.pipelineId))
    .where(
      and(
        eq(pipelines.projectId, projectId),
        eq(pipelineValidations.environmentId, environmentId),
        eq(pipelineValidations.slug, slug),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** The newest validation of one spec hash of a pipeline in an environment. */
export async function latestValidation(
  db: DbOrTx,
  pipelineId: string,
  environmentId: string,
  specHash: string,
) {
  const [row] = await db
    .select()
    .from(pipelineValidations)
    .where(
      and(
        eq(pipelineValidations.pipelineId, pipelineId),
        eq(pipelineValidations.environmentId, environmentId),
        eq(pipelineValidations.specHash, specHash),
      ),
    )
    .orderBy(desc(pipelineValidations.createdAt), desc(pipelineValidations.id))
    .limit(1);
  return row ?? null;
}

export async function findValidationById(db: DbOrTx, id: string) {
  const [row] = await db.select().from(pipelineValidations).where(eq(pipelineValidations.id, id)).limit(1);
  return row ?? null;
}
