// A TCP server on loopback that accepts connections and never says a word: the peer for
// connect-timeout tests (a database that never sends its greeting).
import { createServer, type Socket } from 'node:net';

export type SilentTcpServer = { port: number; close(): Promise<void> };

export async function startSilentTcpServer(): Promise<SilentTcpServer> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
