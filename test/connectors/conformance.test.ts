import { randomBytes } from 'node:crypto';
import {
  type CapabilityName,
  type ConnectorDefinition,
  ConnectorError,
  capabilitiesOf,
  capabilityOf,
  connectorErrorCodes,
  connectors,
  type SchemaDocument,
} from '@sluice/connectors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentTcpServer, startSilentTcpServer } from '../peers/silent-tcp';
import { freePort } from '../support/free-port';
import { stepContext } from '../support/step-context';
import {
  type ConformanceFixture,
  type Live,
  type Reach,
  SUITE_ANSWER_TIMEOUT_MS,
  sampleRows,
} from './conformance/fixture';
import { fixtures } from './conformance/index';

// The cases every connector kind shares, run over every registered kind (docs/architecture.md
// "Connectors"): a kind gets them by registering, and one without a fixture in
// conformance/index.ts fails here. Per-kind suites keep only what is particular to their kind.

const offers = (def: ConnectorDefinition, name: CapabilityName) => capabilitiesOf(def).includes(name);
const withFixture = connectors.flatMap((def) => {
  const fixture = fixtures[def.type];
  return fixture ? [{ type: def.type, def, fixture }] : [];
});
const sinks = withFixture.filter((k) => offers(k.def, 'sink'));

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, 'expected a ConnectorError').toBeInstanceOf(ConnectorError);
  const e = err as ConnectorError;
  // Whether a retry can help comes from the code table, unless a throw site knew better.
  expect(typeof e.retryable).toBe('boolean');
  return e;
}

const test = (def: ConnectorDefinition, reach: Reach) => def.test(reach.conn, reach.ctx);

describe('every registered kind has a conformance fixture', () => {
  it.each(connectors.map((c) => c.type))('%s', (type) => {
    expect(
      fixtures[type],
      `add test/connectors/conformance/${type}.ts and list it in index.ts`,
    ).toBeDefined();
  });
  it('and every fixture is of a registered kind', () => {
    expect(Object.keys(fixtures).sort()).toEqual(connectors.map((c) => c.type).sort());
  });
  it.each(sinks.map((k) => [k.type, k.fixture] as const))('%s names a sink operation', (_, fixture) => {
    expect(fixture.sinkOperation).toBeDefined();
  });
});

describe("a worker's warm start loads each kind's source and sink code", () => {
  // SourceCapability.load and SinkCapability.load import what `read` and `write` import on
  // their first call: every module path and driver they name must resolve.
  const roles = connectors.flatMap((def) =>
    (['source', 'sink'] as const).filter((r) => offers(def, r)).map((r) => [def.type, r, def] as const),
  );
  it.each(roles)('%s %s', async (_, role, def) => {
    await expect(capabilityOf(def, role).load()).resolves.toBeUndefined();
  });
});

describe.concurrent('test connection: the network fails the same way everywhere', () => {
  // Each kind loads its client library on its first connection, synchronously and for seconds
  // on a busy machine; with the cases running side by side, a refused connection's error would
  // then be read after an expired timer. One attempt per kind first, one after another, so the
  // cases below time the network and not module loading (its outcome is not what is tested).
  beforeAll(async () => {
    for (const { def, fixture } of withFixture) {
      await test(def, fixture.at({ host: '127.0.0.1', port: await freePort(), allowPrivate: true })).catch(
        () => {},
      );
    }
  }, 120_000);

  it.each(withFixture)(
    '$type: a refused port is CONNECTION_FAILED, and retryable',
    async ({ def, fixture }) => {
      const err = await failure(
        test(def, fixture.at({ host: '127.0.0.1', port: await freePort(), allowPrivate: true })),
      );
      expect(err.code, err.message).toBe('CONNECTION_FAILED');
      expect(err.retryable).toBe(true);
    },
  );

  it.each(withFixture)('$type: a host that does not resolve is HOST_NOT_FOUND', async ({ def, fixture }) => {
    const host = `nope-${randomBytes(4).toString('hex')}.invalid`;
    const err = await failure(test(def, fixture.at({ host, port: 443, allowPrivate: true })));
    expect(err.code, err.message).toBe('HOST_NOT_FOUND');
    expect(err.retryable).toBe(false);
  });

  it.each(withFixture)(
    '$type: a loopback host is PRIVATE_HOST_BLOCKED unless allowed',
    async ({ def, fixture }) => {
      // Loopback by address, by name and in the integer form resolvers accept.
      const port = await freePort();
      for (const host of ['127.0.0.1', 'localhost', '0x7f000001']) {
        const err = await failure(test(def, fixture.at({ host, port, allowPrivate: false })));
        expect(err.code, `${host}: ${err.message}`).toBe('PRIVATE_HOST_BLOCKED');
      }
    },
  );
});

describe.concurrent('test connection: a server that accepts and never answers times out', () => {
  let silent: SilentTcpServer;
  beforeAll(async () => {
    silent = await startSilentTcpServer();
  });
  afterAll(() => silent?.close());

  for (const { type, def, fixture } of withFixture) {
    it(
      `${type}: TIMEOUT within ${fixture.silentTimeoutSeconds} s`,
      async () => {
        const started = Date.now();
        const reach = fixture.at({ host: '127.0.0.1', port: silent.port, allowPrivate: true });
        // Kinds that wait 30 or 60 s by default for a vendor API's answer wait this long here.
        const limits = { ...reach.ctx.limits, answerTimeoutMs: SUITE_ANSWER_TIMEOUT_MS };
        const err = await failure(test(def, { ...reach, ctx: { ...reach.ctx, limits } }));
        expect(err.code, err.message).toBe('TIMEOUT');
        expect(err.retryable).toBe(true);
        // The kind's bound, not a longer default: the margin covers a busy machine running the
        // cases side by side, and is well short of the 30 and 60 s the suite replaces.
        expect(Date.now() - started).toBeLessThan((fixture.silentTimeoutSeconds + 10) * 1000);
      },
      (fixture.silentTimeoutSeconds + 20) * 1000,
    );
  }
});

describe.concurrent('a read-only data source refuses a sink before connecting', () => {
  it.each(sinks)('$type', async ({ def, fixture }) => {
    const reach = fixture.at({ host: '127.0.0.1', port: await freePort(), allowPrivate: true });
    const step = stepContext({
      kind: 'sink',
      data_source_ref: 'target',
      operation: fixture.sinkOperation ?? {},
    });
    const err = await failure(
      capabilityOf(def, 'sink').write(reach.conn, sampleRows(), step, { ...reach.ctx, readOnly: true }),
    );
    expect(err.code, err.message).toBe('PERMISSION_DENIED');
  });
});

/** The entry of an imported schema document that has this name, with its field names. */
function entryOf(doc: SchemaDocument, name: string): { name: string; fields: string[] } | null {
  const entries: { name: string; fields: string[] }[] =
    doc.schema_type === 'relational'
      ? doc.tables.map((t) => ({ name: `${t.schema}.${t.name}`, fields: t.columns.map((c) => c.name) }))
      : doc.schema_type === 'document'
        ? doc.collections.map((c) => ({ name: c.name, fields: c.fields.map((f) => f.name) }))
        : doc.schema_type === 'file'
          ? doc.files.map((f) => ({ name: f.name, fields: f.fields.map((c) => c.name) }))
          : doc.schema_type === 'openapi'
            ? doc.operations.map((o) => ({ name: `${o.method.toUpperCase()} ${o.path}`, fields: [] }))
            : [];
  const wanted = name.toLowerCase();
  return (
    entries.find((e) => e.name.toLowerCase() === wanted || e.name.toLowerCase().endsWith(`.${wanted}`)) ??
    null
  );
}

for (const { type, def, fixture } of withFixture) {
  describe(`${type} against its peer`, () => {
    let live: Live;
    beforeAll(async () => {
      live = await fixture.live();
    }, 240_000);
    afterAll(() => live?.close());

    const write = (f: ConformanceFixture, reach: Reach, commitKey?: string) =>
      capabilityOf(def, 'sink').write(
        reach.conn,
        sampleRows(),
        stepContext({ kind: 'sink', data_source_ref: 'target', operation: f.sinkOperation ?? {} }),
        { ...reach.ctx, ...(commitKey ? { commitKey } : {}) },
      );

    it('connects with good credentials', async () => {
      await test(def, live.good);
    });

    it('bad credentials: AUTHENTICATION_FAILED, not retryable, the secret not shown', async () => {
      const err = await failure(test(def, live.badCredentials));
      expect(err.code, err.message).toBe('AUTHENTICATION_FAILED');
      expect(err.retryable).toBe(false);
      for (const value of Object.values(live.badCredentials.conn.credentials ?? {}))
        if (typeof value === 'string' && value.length >= 8) expect(err.message).not.toContain(value);
    });

    if (offers(def, 'discover'))
      it('schema import round trip: what is there is listed, and the document is plain JSON', async () => {
        if (live.roundTrip.throughSink) await write(fixture, live.good);
        const doc = await capabilityOf(def, 'discover').importSchema(live.good.conn, live.good.ctx);
        expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
        expect(doc.type).toBe(type);
        const entry = entryOf(doc, live.roundTrip.name);
        expect(entry, `${live.roundTrip.name} in ${JSON.stringify(doc).slice(0, 400)}`).not.toBeNull();
        const fields = entry?.fields.map((f) => f.toLowerCase()) ?? [];
        for (const f of live.roundTrip.fields ?? []) expect(fields).toContain(f.toLowerCase());
      });

    if (offers(def, 'ledger'))
      it('a sink re-run with the same commit key writes nothing', async () => {
        expect(live.countRows, 'a ledger kind counts its rows').toBeDefined();
        const before = await live.countRows!();
        const key = `conformance-${randomBytes(4).toString('hex')}:load:0`;
        const first = await write(fixture, live.good, key);
        expect(await live.countRows!()).toBe(before + 2);
        const again = await write(fixture, live.good, key);
        expect(again).toEqual(first);
        expect(await live.countRows!()).toBe(before + 2);
        const committed = await capabilityOf(def, 'ledger').committedWrites(
          live.good.conn,
          stepContext({ kind: 'sink', data_source_ref: 'target', operation: fixture.sinkOperation ?? {} })
            .step,
          key.replace(/0$/, ''),
          live.good.ctx,
        );
        expect(committed?.rows).toBe(2);
      });
  });
}

it('the error code table says which failures a retry can help', () => {
  const retryable = Object.entries(connectorErrorCodes)
    .filter(([, v]) => v.retryable)
    .map(([k]) => k)
    .sort();
  expect(retryable).toEqual(['CONNECTION_FAILED', 'RATE_LIMITED', 'TIMEOUT']);
  expect(new ConnectorError('REMOTE_ERROR', 'busy', { retryable: true }).retryable).toBe(true);
});
