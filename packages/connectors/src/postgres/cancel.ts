import net from 'node:net';
import type pg from 'pg';

// PostgreSQL's CancelRequest ("Canceling Requests in Progress" in its protocol documentation): a
// connection of its own carries 16 bytes naming the backend and its secret key, and the server
// stops that backend's statement, answers nothing and closes the connection.
const CANCEL_REQUEST_CODE = 80877102;

type Wire = {
  processID?: number | null;
  secretKey?: number | null;
  activeQuery?: unknown;
  connection?: { stream?: net.Socket };
};

/**
 * How to ask the server to stop the statement `client` has under way, or null when it has none
 * (or was connected over a Unix socket). Read before its socket is destroyed: the request goes to
 * the address that socket is connected to, the one the egress guard allowed at connect.
 */
export function cancelRequest(client: pg.Client): (() => void) | null {
  const c = client as unknown as Wire;
  const socket = c.connection?.stream;
  const host = socket?.remoteAddress;
  const port = socket?.remotePort;
  if (c.processID == null || c.secretKey == null || !c.activeQuery || !host || !port) return null;
  const packet = Buffer.alloc(16);
  packet.writeUInt32BE(16, 0);
  packet.writeUInt32BE(CANCEL_REQUEST_CODE, 4);
  packet.writeUInt32BE(c.processID >>> 0, 8);
  packet.writeUInt32BE(c.secretKey >>> 0, 12);
  return () => {
    const s = net.connect({ host, port });
    s.setTimeout(5000, () => s.destroy());
    s.on('error', () => {});
    s.on('connect', () => s.end(packet));
  };
}
