import { z } from 'zod';
import { slugSchema, timestampSchema } from '../../http/fields';
import { peParams } from './bindings.schemas';
import { specHashSchema } from './pipelines.schemas';
import { specHashParam } from './versions.schemas';

export const findingSchema = z
  .object({
    code: z.string().describe('Stable machine-readable code, for example REF_UNBOUND or SQL_INVALID.'),
    message: z.string().describe('What is wrong, for people.'),
    path: z.string().describe('Where in the spec, for example steps[2].data_source_ref.'),
    severity: z
      .enum(['error', 'warning'])
      .describe('An error makes the validation fail; a warning does not.'),
  })
  .describe('One finding of a validation.');

export const validationSchema = z
  .object({
    slug: slugSchema.describe('The validation_slug.'),
    pipeline_slug: slugSchema,
    environment_slug: slugSchema,
    spec_hash: specHashSchema.describe(
      'Full hash of the validated spec (of a draft too; a draft that fails the schema is hashed as sent).',
    ),
    valid: z.boolean().describe('True when no finding has severity error. Deploy needs a valid validation.'),
    findings: z.array(findingSchema),
    created_at: timestampSchema,
  })
  .describe('A stored validation of a pipeline spec against one environment.');

const pipelineSlugField = slugSchema.describe('The pipeline to validate.');

// Exactly one of `spec_hash` (a pushed version) and `spec` (a draft): two members, each refusing
// the other field, so the document states the rule as `oneOf`.
export const validateBody = z
  .xor(
    [
      z
        .object({
          pipeline_slug: pipelineSlugField,
          spec_hash: specHashParam.describe(
            'A pushed version: its full hash or a unique prefix (7+ characters).',
          ),
        })
        .strict()
        .describe('Validate a pushed version.'),
      z
        .object({
          pipeline_slug: pipelineSlugField,
          spec: z.record(z.string(), z.unknown()).describe('A draft spec, checked without being pushed.'),
        })
        .strict()
        .describe('Validate a draft spec.'),
    ],
    { error: 'send exactly one of spec_hash (a pushed version) and spec (a draft)' },
  )
  .describe('Send exactly one of spec_hash and spec.');

export const validationParams = peParams.extend({ validation_slug: slugSchema }).strict();
