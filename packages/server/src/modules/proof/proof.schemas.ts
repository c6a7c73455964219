import { z } from 'zod';
import { nullableTimestampSchema, orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const dsParams = z.object({ organization: orgSlugParam, data_source: slugSchema }).strict();
export const observationParams = dsParams.extend({ observation_slug: slugSchema }).strict();
export const receiptParams = dsParams.extend({ receipt_slug: slugSchema }).strict();

const sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);

export const targetSchema = z
  .object({
    kind: z
      .enum(['pipeline', 'contract', 'path'])
      .describe(
        '`pipeline`: the files a deployed pipeline reads from this data source; `contract`: a contract (its sink pipeline reads the files); `path`: a file or directory of the repository.',
      ),
    ref: z
      .string()
      .min(1)
      .max(500)
      .describe(
        'Pipeline slug, contract slug, or a path relative to the data source base_path (up to 500 characters).',
      ),
  })
  .strict()
  .describe('What every observation checks.');

export const putSettingsBody = z
  .object({
    enabled: z.boolean().describe('Whether observations may be taken; enabling checks the repository id.'),
    publish_checks: z
      .boolean()
      .describe(
        'Publish each compiled receipt as a check on the commit (GitHub check run or status, GitLab status).',
      ),
    expected_repository_id: z
      .string()
      .min(1)
      .max(255)
      .describe(
        "The provider's immutable repository id: GitHub repository id, GitLab project id, or the root commit SHA for plain git; up to 255 characters.",
      ),
    targets: z.array(targetSchema).max(100).describe('What to check, at most 100 targets, no duplicates.'),
  })
  .strict();

export const settingsSchema = putSettingsBody
  .extend({
    data_source_slug: slugSchema.describe('The data source these settings belong to.'),
    expected_repository_id: z
      .string()
      .nullable()
      .describe("The provider's immutable repository id the settings expect, or null before the first PUT."),
    created_at: nullableTimestampSchema.describe(
      'When the settings were first set, or null before the first PUT.',
    ),
    updated_at: nullableTimestampSchema.describe(
      'When the settings were last set, or null before the first PUT.',
    ),
  })
  .describe(
    'Proof settings of a git, github or gitlab data source. Before the first PUT these are the defaults in force: disabled, no checks published, no targets, no expected repository id, null times.',
  );

export const observeBody = z
  .object({
    commit_sha: sha.optional().describe('The commit to observe (40 or 64 hex characters).'),
    ref: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('A branch to observe at its current commit, when no commit_sha is given.'),
  })
  .strict()
  .describe('One of commit_sha or ref; neither observes the default branch.');

const fileSchema = z
  .object({
    path: z.string().describe('Path relative to the data source base_path.'),
    sha256: z.string().describe('SHA-256 of the file bytes, hex.'),
    git_blob: z.string().describe("The file's git blob id."),
    size: z.number().int().describe('Size in bytes.'),
    fields: z
      .array(
        z.object({ name: z.string().describe('Column name.'), type: z.string().describe('Sampled type.') }),
      )
      .nullable()
      .describe('Columns of a CSV or JSON file (sampled), or null for other files.'),
  })
  .describe('An input file and its hashes.');

const findingSchema = z
  .object({
    severity: z.enum(['info', 'warning', 'error']).describe('How bad it is: error fails the target.'),
    code: z.string().describe('Machine-readable reason, e.g. FILE_MISSING, COLUMN_MISSING, FILE_UNREADABLE.'),
    message: z.string().describe('What was found, naming the file, column and step.'),
    path: z.string().nullable().describe('The file concerned, or null.'),
  })
  .describe('One thing a target check found.');

export const targetResultSchema = z
  .object({
    kind: targetSchema.shape.kind,
    ref: z.string().describe('The target ref.'),
    result: z
      .enum(['pass', 'warn', 'fail', 'error'])
      .describe('pass, warn (warnings only), fail (an error finding), error (could not be checked).'),
    files: z.array(z.string()).describe('Paths of the input files this target read.'),
    findings: z.array(findingSchema).describe('What the check found.'),
    contract_revision: z
      .object({
        slug: z.string().describe('Revision slug.'),
        digest: z.string().describe('Revision digest.'),
      })
      .nullable()
      .optional()
      .describe('For a contract target: the latest revision checked.'),
  })
  .describe('The result of one target at the observed commit.');

export const observationSchema = z
  .object({
    slug: slugSchema.describe('Observation slug.'),
    data_source_slug: slugSchema.describe('The data source observed.'),
    candidate_slug: slugSchema
      .nullable()
      .describe('The candidate (repository and commit); null until the commit is known.'),
    repository_id: z.string().nullable().describe('The repository id observed; null until known.'),
    commit_sha: z.string().nullable().describe('The commit observed; null until resolved.'),
    tree_sha: z.string().nullable().describe("The commit's tree id."),
    state: z
      .enum(['running', 'passed', 'warned', 'failed', 'error'])
      .describe('running until checked; then the verdict, or error.'),
    targets: z.array(targetResultSchema).describe('Per target: the result and details.'),
    inputs: z.array(fileSchema).describe('Every input file with its SHA-256 and blob id.'),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .describe('Why the observation could not be made (state error), or null.'),
    digest: z
      .string()
      .nullable()
      .describe('SHA-256 of the canonical JSON of the observation record; null while running.'),
    observed_at: nullableTimestampSchema.describe('When the checks finished.'),
    created_at: timestampSchema,
  })
  .describe('An immutable record of checking every target at one commit.');

export const compileBody = z
  .object({
    candidate_slug: slugSchema.describe('The candidate the receipt is for.'),
    observation_slugs: z
      .array(slugSchema)
      .min(1)
      .max(2)
      .refine((a) => new Set(a).size === a.length, 'observation slugs must be unique')
      .describe(
        'One observation at the candidate commit, or two: base then head (head at the candidate commit).',
      ),
  })
  .strict();

export const receiptSchema = z
  .object({
    slug: slugSchema.describe('Receipt slug.'),
    data_source_slug: slugSchema.describe('The data source.'),
    candidate_slug: slugSchema.describe('The candidate it is for.'),
    sequence: z.number().int().describe('Position in the data source receipt chain, from 1.'),
    verdict: z.enum(['PASSED', 'WARNED', 'FAILED']).describe('The verdict signed into the receipt.'),
    observation_slugs: z.array(slugSchema).describe('The observations compiled.'),
    digest: z.string().describe('SHA-256 of the canonical JSON of the envelope; the next receipt names it.'),
    prev_receipt_digest: z
      .string()
      .nullable()
      .describe("The previous receipt's digest, or null for the first."),
    envelope: z
      .object({
        payloadType: z.string().describe('application/vnd.in-toto+json'),
        payload: z.string().describe('Base64 of the in-toto Statement (canonical JSON).'),
        signatures: z
          .array(
            z.object({
              keyid: z.string().describe('SHA-256 of the public key.'),
              sig: z.string().describe('Base64 Ed25519 signature over the DSSE PAE.'),
            }),
          )
          .describe('Signatures.'),
      })
      .describe('The DSSE envelope; verify with `sluice proof verify`.'),
    check: z
      .object({
        name: z.string().describe('Check name, sluice/proof/<data source slug>.'),
        conclusion: z.string().describe('success, neutral or failure.'),
        published: z.boolean().describe('Whether the provider accepted it.'),
        error: z.string().nullable().describe('Why publishing failed, or null.'),
      })
      .nullable()
      .describe('The check published on the commit, or null when publish_checks is off.'),
    compiled_at: timestampSchema,
  })
  .describe('A signed, immutable proof receipt.');

export const keySchema = z
  .object({
    keyid: z.string().describe('SHA-256 (hex) of the raw Ed25519 public key.'),
    algorithm: z.literal('ed25519').describe('Signature algorithm.'),
    public_key_pem: z.string().describe('The public key, SPKI PEM.'),
    active: z.boolean().describe('Whether new receipts are signed with it (exactly one key is active).'),
    created_at: timestampSchema,
    valid_from: timestampSchema.describe('When the key began signing receipts (its creation).'),
    valid_until: nullableTimestampSchema.describe(
      'When the key was retired by a rotation and stopped signing, or null while it is active. Receipts it signed before then stay valid.',
    ),
  })
  .describe('A public key of this deployment: the active one and every retired one.');

export const listObservationsQuery = listQuerySchema(['observation_created_at'] as const);
export const listReceiptsQuery = listQuerySchema(['receipt_created_at'] as const);
export const observationListSchema = listResponseSchema('observations', observationSchema);
export const receiptListSchema = listResponseSchema('receipts', receiptSchema);
export const keyListSchema = listResponseSchema('keys', keySchema);

export type PutSettings = z.infer<typeof putSettingsBody>;
export type TargetResult = z.infer<typeof targetResultSchema>;
