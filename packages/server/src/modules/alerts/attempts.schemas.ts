import { z } from 'zod';
import { nullableTimestampSchema, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema, pageMeta } from '../../http/pagination';

export const attemptStatuses = ['unknown', 'queued', 'sent', 'failed'] as const;
export const destinationTypes = ['unknown', 'email'] as const;

export const providerMetadataSchema = z
  .object({
    transport: z
      .string()
      .optional()
      .describe('smtp; log when no SMTP server is configured and the message was written to the server log.'),
    message_id: z.string().optional().describe('Message-ID header of this try.'),
    smtp_response_code: z.number().int().optional().describe('Reply code of the SMTP server.'),
    enhanced_status: z.string().optional().describe('RFC 3463 enhanced status, e.g. 5.1.1.'),
    smtp_command: z.string().optional().describe('The command the server answered (RCPT TO, DATA …).'),
    smtp_response: z
      .string()
      .optional()
      .describe('First line of the reply, at most 300 characters, token-like strings removed.'),
    failure_class: z
      .string()
      .optional()
      .describe(
        'transient, permanent, authentication, tls or configuration (not_configured on tries recorded before mail without SMTP went to the log).',
      ),
    accepted_count: z.number().int().optional().describe('Recipients the server accepted.'),
    rejected_count: z.number().int().optional().describe('Recipients the server refused.'),
    rejected_recipients: z.array(z.string()).optional().describe('Addresses the server refused.'),
    duration_ms: z.number().int().optional().describe('Time the try took.'),
    next_retry_at: z.string().optional().describe('When the next try is queued for, if any.'),
  })
  .strict()
  .describe('Sanitized provider metadata (an allowlist): never credentials, bodies or stack traces.');

export const attemptSchema = z
  .object({
    slug: slugSchema,
    notification_record_slug: slugSchema.describe('The notification this delivery is for.'),
    alert_policy_slug: slugSchema.nullable().describe('The policy credited with the send, or null.'),
    destination_slug: slugSchema.nullable().describe('Destination, or null once it was deleted.'),
    destination_name: z.string().nullable().describe('Destination name at the time of the try.'),
    destination_type: z.enum(destinationTypes).describe('Destination type.'),
    status: z.enum(attemptStatuses).describe('queued → sent | failed.'),
    provider_attempt: z.number().int().min(1).describe('1 for the first try, +1 per retry (at most 5).'),
    provider_response_metadata: providerMetadataSchema,
    error_category: z.string().nullable().describe('EMAIL_DELIVERY_FAILED when the try failed, else null.'),
    error_message: z.string().nullable().describe('Sanitized reason of the failure, else null.'),
    queued_at: timestampSchema.describe('When the try was queued.'),
    sent_at: nullableTimestampSchema.describe('When the server accepted the message.'),
    failed_at: nullableTimestampSchema.describe('When the try failed.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .strict()
  .describe('One try to deliver one message for one notification to one destination.');

export const attemptSorts = ['alert_delivery_attempt_created_at'] as const;
export const listAttemptsQuery = listQuerySchema(attemptSorts);
export const attemptListSchema = listResponseSchema('alert_delivery_attempts', attemptSchema);

// The comma-separated list as one pattern, so the document states the item rule too.
const SLUG_LIST_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:,[a-z0-9]+(?:-[a-z0-9]+)*){0,49}$/;

export const bulkAttemptsQuery = z
  .object({
    notification_slugs: z
      .string()
      .regex(SLUG_LIST_PATTERN, 'must be 1 to 50 slugs (^[a-z0-9]+(?:-[a-z0-9]+)*$ each) separated by commas')
      .transform((v) => v.split(','))
      .pipe(z.array(slugSchema).min(1).max(50))
      .describe('1 to 50 notification slugs, comma separated.'),
    limit_per_notification: z.coerce
      .number()
      .int()
      .min(1)
      .max(10)
      .default(5)
      .describe('Recent attempts per notification, 1 to 10 (default 5).'),
  })
  .strict();
export const bulkAttemptListSchema = z
  .object({ alert_delivery_attempts: z.array(attemptSchema), ...pageMeta })
  .describe('Newest attempts first per notification; has_more is false and the cursors null.');
