// A TCP listener that only counts the connections it accepts (and what arrives on them): the
// witness for egress tests, where the assertion is that nothing ever reached a blocked address.
import { createServer, type Socket } from 'node:net';

export type AcceptRecorder = {
  host: string;
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Bytes received on them. */
  received(): Buffer;
  close(): Promise<void>;
};

export async function startAcceptRecorder(host = '127.0.0.2'): Promise<AcceptRecorder> {
  const sockets = new Set<Socket>();
  const chunks: Buffer[] = [];
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    host,
    port,
    accepted: () => accepted,
    received: () => Buffer.concat(chunks),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
