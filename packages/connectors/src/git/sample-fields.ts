import { csvRecords } from '@sluice/engine';
import type { Column } from '../types';
import { delimiterOf, jsonLines } from './formats';
import { jsonRecords } from './json';

// Fields of a CSV (header and sampled cell types) or JSON file (keys of the first records), for
// schema import and proof observations; reads only the first records of the stream.

const SAMPLE_RECORDS = 100;

/** Fields of a CSV (header and sampled cell types) or JSON file (keys of the first records). */
export async function sampleFileFields(
  bytes: AsyncIterable<Buffer>,
  format: string,
  path: string,
): Promise<Column[]> {
  if (format === 'csv') {
    let header: string[] | null = null;
    const types: string[][] = [];
    let n = 0;
    outer: for await (const batch of csvRecords(bytes, delimiterOf(undefined, path))) {
      for (const rec of batch) {
        if (!header) {
          header = rec.map((c, i) => c ?? `column${i}`);
          continue;
        }
        rec.forEach((v, i) => {
          types[i] ??= [];
          if (v !== null) types[i].push(scalarType(v));
        });
        if (++n >= SAMPLE_RECORDS) break outer;
      }
    }
    return (header ?? []).map((name, i) => ({ name, type: merge(types[i] ?? []) }));
  }
  const records = format === 'json' ? jsonRecords(bytes, undefined) : jsonLines(bytes);
  const seen = new Map<string, string[]>();
  let n = 0;
  outer: for await (const batch of records) {
    for (const r of batch) {
      if (r && typeof r === 'object' && !Array.isArray(r)) {
        for (const [k, v] of Object.entries(r)) {
          if (!seen.has(k)) seen.set(k, []);
          if (v !== null) seen.get(k)!.push(jsonType(v));
        }
      }
      if (++n >= SAMPLE_RECORDS) break outer;
    }
  }
  return [...seen].map(([name, ts]) => ({ name, type: merge(ts) }));
}

const scalarType = (v: string) =>
  /^-?\d{1,18}$/.test(v)
    ? 'integer'
    : /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(v)
      ? 'number'
      : /^(true|false)$/i.test(v)
        ? 'boolean'
        : 'string';

const jsonType = (v: unknown) =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? 'integer'
      : 'number'
    : typeof v === 'boolean'
      ? 'boolean'
      : typeof v === 'string'
        ? 'string'
        : Array.isArray(v)
          ? 'array'
          : 'object';

function merge(types: string[]): string {
  const set = new Set(types);
  if (set.size === 0) return 'string';
  if (set.size === 1) return types[0];
  if ([...set].every((t) => t === 'integer' || t === 'number')) return 'number';
  return 'string';
}
