// A PostgreSQL server front that asks every client for its password in cleartext
// (AuthenticationCleartextPassword, as pg_hba `password` does) and records everything it
// receives after the startup message: the witness that no password went out in the clear.
import { createServer, type Socket } from 'node:net';

export type CleartextPgPeer = {
  port: number;
  /** Bytes received after the startup message, per connection. */
  received(): string;
  close(): Promise<void>;
};

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0C${code}\0M${message}\0\0`, 'utf8')]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

export async function startCleartextPgPeer(): Promise<CleartextPgPeer> {
  const sockets = new Set<Socket>();
  let received = '';
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let buf = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk) => {
      if (started) {
        received += chunk.toString('latin1');
        // A password message ('p'): refuse it, as a server with another password would.
        if (chunk[0] === 0x70) socket.end(errorResponse('28P01', 'password authentication failed'));
        return;
      }
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 8 || buf.length < buf.readInt32BE(0)) return;
      const code = buf.readInt32BE(4);
      if (code === 80877103) {
        // SSLRequest: this server speaks no TLS.
        socket.write('N');
        buf = buf.subarray(8);
        return;
      }
      started = true;
      const ask = Buffer.alloc(9);
      ask.write('R', 0);
      ask.writeInt32BE(8, 1);
      ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
      socket.write(ask);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
