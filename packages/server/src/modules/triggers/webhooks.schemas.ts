import { z } from 'zod';
import { slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

// Webhook deliveries (docs/triggers.md#delivering): the public route's parameters and answers, and
// the list of accepted deliveries.

export const deliveryOutcomes = ['started'] as const;

export const deliverySchema = z
  .object({
    delivery_id: z.string().describe('Sender-provided delivery identity.'),
    received_at: timestampSchema.describe('When it was accepted.'),
    body_sha256: z.string().describe('SHA-256 of the body, hex (the body is not kept).'),
    input_keys: z.array(z.string()).describe('Input keys the mapping produced (never the values).'),
    outcome: z.enum(deliveryOutcomes).describe('What it did.'),
    run_slug: slugSchema.nullable().describe('Run it started.'),
  })
  .describe('An accepted webhook delivery.');
export const deliverySorts = ['delivery_received_at'] as const;
export const listDeliveriesQuery = listQuerySchema(deliverySorts);
export const deliveryListSchema = listResponseSchema('deliveries', deliverySchema);

export const deliveryParams = z
  .object({
    pipeline_trigger_slug: slugSchema,
    delivery_id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._:-]+$/)
      .describe('Sender-provided delivery identity, equal to the webhook-id header.'),
  })
  .strict();

export const deliveryAcceptedSchema = z
  .object({
    delivery_id: z.string().describe('The delivery id.'),
    run: z
      .object({
        slug: slugSchema.describe('Run slug.'),
        state: z.string().describe('Run state.'),
        trigger: z.literal('webhook').describe('Always webhook.'),
        trigger_slug: slugSchema.describe('This trigger.'),
      })
      .describe('The run the delivery started.'),
  })
  .describe('Accepted delivery.');
