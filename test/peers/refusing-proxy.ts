// A TCP forwarder on loopback that can turn connections away: each of the next `n` connections
// after `refuse(n)` is reset at once (the client sees ECONNRESET, as from a server that is not
// up yet); every other one is piped to the target. The peer for run retry tests: a data source
// that refuses one attempt and accepts the next.
import { connect, createServer, type Socket } from 'node:net';

export type RefusingProxy = {
  port: number;
  /** Resets the next `n` connections. */
  refuse(n: number): void;
  /** Connections reset so far, and connections forwarded. */
  counts(): { refused: number; forwarded: number };
  close(): Promise<void>;
};

export async function startRefusingProxy(target: { host: string; port: number }): Promise<RefusingProxy> {
  const sockets = new Set<Socket>();
  let toRefuse = 0;
  let refused = 0;
  let forwarded = 0;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  };
  const server = createServer((client) => {
    track(client);
    if (toRefuse > 0) {
      toRefuse--;
      refused++;
      client.resetAndDestroy();
      return;
    }
    forwarded++;
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    refuse(n) {
      toRefuse = n;
    },
    counts: () => ({ refused, forwarded }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
