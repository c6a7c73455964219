import { describe, expect, it } from 'vitest';
import {
  collectSink,
  edges,
  harness,
  memoryPorts,
  rejection,
  rowsSource,
  sink,
  source,
  transform,
} from './test-support';

// executeRun's templates (executor.test.ts has its flow, failures and retries): what each step's
// operation renders from the run's input, environment, secrets and cursor.

describe('executeRun: templates', () => {
  const op = {
    query_params: {
      region: '{{runtime.input.region}}',
      stage: '{{runtime.env.STAGE}}',
      run: 'run={{runtime.run_slug}}',
      after: '{{runtime.incremental.lower_bound.cursor}}',
    },
    headers: { Authorization: 'Bearer {{runtime.secrets.API_TOKEN}}' },
  };
  const scope = {
    runtime: {
      input: { region: 'eu', limit: 5 },
      env: { STAGE: 'prod' },
      secrets: { API_TOKEN: 'tok-123' },
      run_slug: 'run-abc',
    },
  };

  it('renders runtime input, env, secrets, run slug and the step cursor; leaves {{input}}', async () => {
    const rendered: Record<string, unknown> = {};
    const h = await harness(
      {
        steps: [source('orders', op), sink('load')],
        edges: edges(['orders', 'load']),
        inputs: { region: {}, limit: {} },
      },
      memoryPorts(
        {
          orders: (ctx) => {
            rendered.orders = ctx.render(ctx.step.operation);
            rendered.limit = ctx.render('{{runtime.input.limit}}');
            return rowsSource(['id:int'], [[[1]]])();
          },
        },
        {
          load: async (input, ctx) => {
            rendered.load = ctx.render(ctx.step.operation);
            return collectSink([])(input, ctx);
          },
        },
      ),
    );
    await h.run({ scope, cursors: { orders: 'c-41' }, secretValues: ['tok-123'] });
    expect(rendered.orders).toMatchObject({
      query_params: { region: 'eu', stage: 'prod', run: 'run=run-abc', after: 'c-41' },
      headers: { Authorization: 'Bearer tok-123' },
    });
    expect(rendered.limit).toBe(5);
    expect(rendered.load).toMatchObject({ body: '{{input}}' });
    await h.cleanup();
  });

  it('fails with TEMPLATE_MISSING when a template has no value, even if the port wraps it', async () => {
    const h = await harness(
      {
        steps: [source('orders', { path: '/x/{{runtime.env.MISSING}}' }), sink('load')],
        edges: edges(['orders', 'load']),
      },
      memoryPorts(
        {
          orders: (ctx) => {
            try {
              ctx.render(ctx.step.operation);
            } catch (err) {
              throw new Error(`bad statement: ${(err as Error).message}`);
            }
            return rowsSource(['id:int'], [])();
          },
        },
        { load: collectSink([]) },
      ),
    );
    const err = await rejection(h.run({ scope }));
    expect(err).toMatchObject({
      code: 'TEMPLATE_MISSING',
      message: 'step orders: template {{runtime.env.MISSING}} has no value',
    });
    expect(h.final('orders')?.error?.code).toBe('TEMPLATE_MISSING');
    await h.cleanup();
  });

  it('binds templates of transform SQL as parameters, never as SQL text', async () => {
    const got: unknown[][] = [];
    const h = await harness(
      {
        steps: [
          source('orders'),
          transform('pick', 'SELECT id FROM orders WHERE region = {{runtime.input.region}} ORDER BY id'),
          sink('load'),
        ],
        edges: edges(['orders', 'pick'], ['pick', 'load']),
        inputs: { region: {} },
      },
      memoryPorts(
        {
          orders: rowsSource(
            ['id:int', 'region'],
            [
              [
                [1, 'eu'],
                [2, "x' OR 1=1 --"],
                [3, 'us'],
              ],
            ],
          ),
        },
        { load: collectSink(got) },
      ),
    );
    await h.run({ scope: { runtime: { ...scope.runtime, input: { region: "x' OR 1=1 --" } } } });
    expect(got).toEqual([[2]]);
    await h.cleanup();
  });
});
