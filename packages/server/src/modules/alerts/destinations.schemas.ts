import { z } from 'zod';
import {
  emailSchema,
  nameSchema,
  orgSlugParam,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { destinationTypes } from './attempts.schemas';

export const emailConfigSchema = z
  .object({
    recipients: z
      .array(emailSchema)
      .min(1)
      .max(50)
      .describe('Addresses that receive the messages: 1 to 50 Email values.'),
  })
  .strict()
  .describe('For type email: the recipients, and no other properties. Holds no secret.');

export const destinationSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    type: z.enum(destinationTypes).describe('Destination type.'),
    non_secret_config: emailConfigSchema,
    enabled: z.boolean().describe('Disabled destinations receive nothing.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Where alert policies send notifications (email).');

export const createDestinationBody = z
  .object({
    name: nameSchema,
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
    type: z.enum(['email']).describe('Destination type; only email is deliverable.'),
    non_secret_config: emailConfigSchema,
    enabled: z.boolean().default(true).describe('Whether it receives messages (default true).'),
  })
  .strict();

export const updateDestinationBody = z
  .object({
    name: nameSchema.optional(),
    non_secret_config: emailConfigSchema.optional(),
    enabled: z.boolean().optional().describe('Whether it receives messages.'),
  })
  .strict();

export const destinationParams = z
  .object({ organization: orgSlugParam, alert_destination_slug: slugSchema })
  .strict();

export const destinationSorts = ['alert_destination_created_at'] as const;
export const listDestinationsQuery = listQuerySchema(destinationSorts);
export const destinationListSchema = listResponseSchema('alert_destinations', destinationSchema);

export const destinationTestResultSchema = z
  .object({
    status: z.string().describe('accepted: the test message is queued for delivery.'),
    destination_slug: slugSchema,
    destination_type: z.enum(destinationTypes).describe('Destination type.'),
    recipient_count: z.number().int().min(1).describe('Recipients the message goes to.'),
    diagnostics_persisted: z
      .boolean()
      .describe('False: a test creates no notification record and no delivery attempt.'),
    enqueued_jobs: z
      .array(
        z.object({
          kind: z.string().describe('alert_destination_test.'),
          queue: z.string().describe('Queue the job waits in (its own, so alert storms cannot starve it).'),
          state: z.string().describe('created.'),
        }),
      )
      .describe('Queue metadata per enqueued job.'),
  })
  .describe('A destination test accepted for asynchronous delivery (one try, no retry).');
