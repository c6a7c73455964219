import pg from 'pg';

// A vitest setup file (vitest.config.ts): a pg client that is handed a statement while another
// still waits on it throws, as pg 9 will (pg 8 queues it and warns once a process). A
// transaction is one connection: reads in parallel on it (Promise.all over `tx`) queue there.

const GUARDED = Symbol.for('sluice.test.oneStatementAtATime');
const proto = pg.Client.prototype as any;
if (!proto[GUARDED]) {
  const query = proto.query;
  proto.query = function (this: any, ...args: any[]) {
    if (this._queryQueue?.length > 0 && !this.pipeline) {
      const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
      throw new Error(
        `a statement sent while another waits on the same connection: ${String(text).slice(0, 200)}`,
      );
    }
    return query.apply(this, args);
  };
  proto[GUARDED] = true;
}
