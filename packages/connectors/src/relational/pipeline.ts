import {
  type Operation,
  type Payload,
  type RowsPayload,
  rowsOf,
  type Step,
  type StepContext,
} from '@sluice/engine';
import { z } from 'zod';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { checkColumns, parseTableName, type TableName } from './identifiers';
import { type CompiledStatement, compileTemplate, type Dialect, leadingKeyword } from './placeholders';

// What the PostgreSQL and MySQL pipeline steps share: reading the step's SQL operation, its
// templates bound as parameters, and the checks a sink makes before it connects.

type SqlOperation = Extract<Operation, { operation_type: 'sql' }>;
export type SqlWrite = NonNullable<SqlOperation['write']>;

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

function sqlOperationOf(step: StepContext): SqlOperation {
  const op = step.step.operation;
  if (op.operation_type !== 'sql')
    throw invalid(`a SQL data source runs sql operations, not ${op.operation_type}`);
  return op;
}

// A source reads: its statement is a query (the session is read-only as well).
const QUERY_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']);

/**
 * The source query with its templates as bound parameters, rendered now. `marker` writes a
 * parameter into the text instead (see compileTemplate).
 */
export function sourceQuery(
  step: StepContext,
  dialect: Dialect,
  marker?: (index: number) => string,
): CompiledStatement {
  const op = sqlOperationOf(step);
  if (!op.sql) throw invalid('a SQL source step needs operation.sql');
  const keyword = leadingKeyword(op.sql);
  if (keyword !== null && !QUERY_KEYWORDS.has(keyword)) {
    throw invalid(`a source runs a query (SELECT, WITH, VALUES or TABLE), not ${keyword}`);
  }
  return compileTemplate(op.sql, dialect, (name) => step.render(`{{${name}}}`), marker);
}

export type SinkPlan = { write: SqlWrite; table: TableName; rows: RowsPayload; names: string[] };

/** The sink's target and its input as rows, checked before any connection is made. */
export async function sinkPlan(
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
  dialect: Dialect,
): Promise<SinkPlan> {
  assertWritable(ctx);
  const write = sqlOperationOf(step).write;
  if (!write) throw invalid('a SQL sink step needs operation.write');
  const table = parseTableName(write.table, dialect);
  if (write.mode === 'upsert' && !write.key)
    throw invalid('upsert needs key: the columns that identify a row');
  if (write.mode === 'apply' && !write.key)
    throw invalid('apply needs key: the columns that identify a row of the change rows');
  const rows = await tableRows(input);
  const names = rows.columns.map((c) => c.name);
  // An empty input has no columns; it still empties the table in replace mode.
  checkColumns(names, names.length > 0 ? write.key : undefined, dialect);
  return { write, table, rows, names };
}

/**
 * Rows of a tabular payload (the engine's conversion: JSON columns from the first batch's
 * keys, CSV columns from its header); files and forms are refused with a message.
 */
export async function tableRows(input: Payload): Promise<RowsPayload> {
  if (input.kind === 'file' || input.kind === 'form') {
    throw invalid(`a ${input.kind} payload cannot be written to a table; it takes rows, JSON records or CSV`);
  }
  return rowsOf(input);
}

/** The step's signal and the caller's, as one. */
export function signalOf(step: StepContext, ctx: ConnectorContext): AbortSignal {
  return ctx.signal ? AbortSignal.any([step.signal, ctx.signal]) : step.signal;
}

/** The sink's target table, or null when the step is not a SQL write (nothing to look up). */
export function sinkTableOf(step: Step, dialect: Dialect): TableName | null {
  const op = step.operation;
  if (op.operation_type !== 'sql' || !op.write) return null;
  return parseTableName(op.write.table, dialect);
}

/**
 * A SQL sink's operation schema when the kind offers only some write modes: validation reports
 * another mode as OPERATION_INVALID at operation.write.mode, before any run.
 */
export function sqlSinkOperation(label: string, modes: SqlWrite['mode'][]): z.ZodType {
  const mode = z
    .string()
    .optional()
    .refine((m) => m === undefined || (modes as string[]).includes(m), {
      message: `${label} sinks take mode ${modes.join(', ')}`,
    });
  return z.looseObject({ write: z.looseObject({ mode }).optional() });
}
