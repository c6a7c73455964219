import net from 'node:net';

// A TCP proxy on loopback that holds every chunk `delayMs` in each direction before passing it
// on: a data source behind it answers as a server `2 × delayMs` away would (a round trip in the
// same region is ~0.5–2 ms, across regions tens of ms). Chunks keep their order (timers of one
// duration fire in the order they were set); nothing is dropped or merged. Bench use only.

export type DelayProxy = { port: number; close(): Promise<void> };

export async function startDelayProxy(
  target: { host: string; port: number },
  delayMs: number,
): Promise<DelayProxy> {
  const sockets = new Set<net.Socket>();
  const pipe = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, delayMs);
    });
    // An end or an error goes on after the data before it.
    from.on('end', () => setTimeout(() => to.end(), delayMs));
    from.on('error', () => setTimeout(() => to.destroy(), delayMs));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
