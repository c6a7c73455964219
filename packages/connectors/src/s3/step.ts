import type { StepContext } from '@sluice/engine';
import { signalOf } from '../relational/pipeline';
import { ConnectorError } from '../types';
import { type S3Operation, s3OperationSchema } from './config';

// The `operation_type: s3` of a pipeline step: rendered (templates in key and prefix), then
// checked here, since the engine accepts any fields for this type at push time.

export function s3OperationOf(step: StepContext): S3Operation & { operation: 'list' | 'read' | 'write' } {
  const rendered = step.render(step.step.operation) as Record<string, unknown>;
  for (const f of ['key', 'prefix'] as const) {
    const v = rendered[f];
    if (v !== undefined && typeof v !== 'string') rendered[f] = v === null ? '' : JSON.stringify(v);
  }
  const r = s3OperationSchema.safeParse(rendered);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new ConnectorError('INVALID_STATEMENT', `operation.${i.path.join('.')}: ${i.message}`);
  }
  const op = r.data;
  const operation = op.operation ?? (step.step.kind === 'sink' ? 'write' : op.key ? 'read' : 'list');
  if (step.step.kind === 'sink' && operation !== 'write')
    throw new ConnectorError('INVALID_STATEMENT', 'an S3 sink step writes: operation must be write');
  if (step.step.kind === 'source' && operation === 'write')
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'an S3 source step reads or lists: operation write belongs to sinks',
    );
  if (operation !== 'list' && !op.key)
    throw new ConnectorError('INVALID_STATEMENT', `operation.key: an S3 ${operation} needs a key`);
  if (op.key?.includes('{{input}}'))
    throw new ConnectorError('INVALID_STATEMENT', 'operation.key cannot use {{input}}');
  return { ...op, operation };
}

export { signalOf };
