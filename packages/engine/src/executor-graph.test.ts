import { describe, expect, it } from 'vitest';
import type { RunError } from './executor';
import type { Payload, SinkResult, SourceOutput } from './payloads';
import {
  collectSink,
  edges,
  harness,
  memoryPorts,
  rowsSource,
  sink,
  sleep,
  source,
  transform,
} from './test-support';

const once = (payload: Payload) => (): SourceOutput => ({ payload, nextCursor: async () => 'done' });
const text = async (chunks: AsyncIterable<Uint8Array>) => {
  let s = '';
  for await (const c of chunks) s += Buffer.from(c).toString('utf8');
  return s;
};

describe('executeRun: graph shapes', () => {
  it('writes each upstream payload of a sink with several inputs in turn', async () => {
    const got: unknown[][] = [];
    const h = await harness(
      {
        steps: [source('a'), source('b'), sink('load')],
        edges: edges(['a', 'load'], ['b', 'load']),
      },
      memoryPorts(
        { a: rowsSource(['id:int'], [[[1], [2]]], 'ca'), b: rowsSource(['id:int'], [[[3]]], 'cb') },
        { load: collectSink(got) },
      ),
    );
    expect((await h.run()).cursors).toEqual({ a: 'ca', b: 'cb' });
    expect(got).toEqual([[1], [2], [3]]);
    expect(h.final('load')?.counters).toMatchObject({ rows_in: 3, rows_out: 3 });
    await h.cleanup();
  });

  it('spools bytes for several readers: a CSV to a sink and a transform', async () => {
    const csv = 'id,name\n1,a\n2,b\n';
    let seen = '';
    const got: unknown[][] = [];
    const h = await harness(
      {
        steps: [source('f'), sink('raw'), transform('t', 'SELECT count(*) AS n FROM f'), sink('load')],
        edges: edges(['f', 'raw'], ['f', 't'], ['t', 'load']),
      },
      memoryPorts(
        {
          f: once({
            kind: 'csv',
            delimiter: ',',
            header: true,
            chunks: (async function* () {
              yield Buffer.from(csv.slice(0, 9));
              yield Buffer.from(csv.slice(9));
            })(),
          }),
        },
        {
          raw: async (input): Promise<SinkResult> => {
            if (input.kind !== 'csv') throw new Error('csv expected');
            seen = await text(input.chunks);
            return { rows: 0, bytes: seen.length };
          },
          load: collectSink(got),
        },
      ),
    );
    await h.run();
    expect(seen).toBe(csv);
    expect(got).toEqual([[2]]);
    expect(h.final('f')?.counters.bytes_out).toBe(csv.length);
    expect(h.final('raw')?.counters).toMatchObject({ bytes_in: csv.length, bytes_out: csv.length });
    await h.cleanup();
  });

  it('interrupts a long DuckDB query on cancel', async () => {
    const h = await harness(
      {
        steps: [
          source('s'),
          transform('slow', 'SELECT count(*) FROM range(100000000000) r, s WHERE r.range % 7 = s.id'),
          sink('load'),
        ],
        edges: edges(['s', 'slow'], ['slow', 'load']),
      },
      memoryPorts({ s: rowsSource(['id:int'], [[[1]]]) }, { load: collectSink([]) }),
    );
    const ctl = new AbortController();
    const running = h.run({ signal: ctl.signal });
    await sleep(700);
    const t0 = Date.now();
    ctl.abort('run time limit reached');
    const err = await running.then(
      () => null,
      (e: RunError) => e,
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(err).toMatchObject({ code: 'CANCELED', message: 'run time limit reached' });
    expect(h.final('slow')?.state).toBe('canceled');
    expect(h.final('load')?.state).toBe('canceled');
    await h.cleanup();
  });

  it('reports progress of long steps while they run and rethrows an observer failure at the end', async () => {
    const h = await harness(
      { steps: [source('s'), sink('load')], edges: edges(['s', 'load']) },
      memoryPorts(
        {
          s: rowsSource(
            ['id:int'],
            (function* () {
              for (let i = 0; i < 3; i++) yield [[i]];
            })(),
          ),
        },
        {
          load: async (input) => {
            if (input.kind !== 'rows') throw new Error('rows expected');
            let n = 0;
            for await (const b of input.batches) {
              n += b.length;
              await sleep(600);
            }
            return { rows: n, bytes: 0 };
          },
        },
      ),
    );
    let calls = 0;
    const err = await h
      .run({
        observer: {
          onStep: async (r) => {
            h.reports.push(r);
            if (++calls === 1) throw new Error('store unavailable');
          },
        },
      })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(err?.message).toBe('store unavailable');
    const running = h.reports.filter((r) => r.step === 'load' && r.state === 'running');
    expect(running.length).toBeGreaterThan(1);
    expect(running.at(-1)!.counters.rows_in).toBeGreaterThan(0);
    expect(h.final('load')?.state).toBe('succeeded');
    await h.cleanup();
  });
});
