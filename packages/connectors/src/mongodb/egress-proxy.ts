import net from 'node:net';
import { EgressBlockedError, type EgressPolicy, resolveAllowed } from '../egress';

// The MongoDB driver opens sockets on its own: to the configured hosts, to every member a
// replica set announces, for monitoring and for its pool, and it connects to IP literals without
// a DNS lookup. None of that has a hook that runs before the connect, except its SOCKS5 support:
// every socket of a client goes to the proxy first and names its destination. So each client
// gets a SOCKS5 endpoint of its own on loopback, in process, that resolves and checks every
// destination through the egress guard and connects only to the checked address. A blocked
// destination is refused before any byte leaves for it, and remembered for the caller's error.

export type EgressProxy = {
  host: string;
  port: number;
  /** The first destination the guard refused, if any. */
  blocked(): EgressBlockedError | null;
  /**
   * The last failed connect to a checked destination (refused, unreachable, timed out): the
   * driver only sees its SOCKS reply, so the caller's error names the cause from here.
   */
  upstreamError(): Error | null;
  close(): Promise<void>;
};

const VERSION = 5;
const REPLY = {
  succeeded: 0x00,
  failure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  refused: 0x05,
  commandUnsupported: 0x07,
  addressUnsupported: 0x08,
} as const;

/** A SOCKS5 reply; the bound address is not used by the driver, so it is always 0.0.0.0:0. */
const reply = (code: number) => Buffer.from([VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);

type Request = { host: string; port: number; rest: Buffer };

/** Parses greeting + request once both are buffered; null while more bytes are needed. */
function parseGreeting(buf: Buffer): { methods: number[]; rest: Buffer } | null {
  if (buf.length < 2) return null;
  const n = buf[1];
  if (buf.length < 2 + n) return null;
  return { methods: [...buf.subarray(2, 2 + n)], rest: buf.subarray(2 + n) };
}

function parseRequest(buf: Buffer): Request | 'unsupported' | null {
  if (buf.length < 5) return null;
  if (buf[0] !== VERSION || buf[1] !== 1) return 'unsupported'; // CONNECT only
  const atyp = buf[3];
  let host: string;
  let at: number;
  if (atyp === 1) {
    if (buf.length < 10) return null;
    host = [...buf.subarray(4, 8)].join('.');
    at = 8;
  } else if (atyp === 3) {
    const len = buf[4];
    if (buf.length < 5 + len + 2) return null;
    host = buf.subarray(5, 5 + len).toString('latin1');
    at = 5 + len;
  } else if (atyp === 4) {
    if (buf.length < 22) return null;
    const parts: string[] = [];
    for (let i = 0; i < 8; i++) parts.push(buf.readUInt16BE(4 + i * 2).toString(16));
    host = parts.join(':');
    at = 20;
  } else {
    return 'unsupported';
  }
  return { host, port: buf.readUInt16BE(at), rest: buf.subarray(at + 2) };
}

export async function startEgressProxy(
  policy: EgressPolicy,
  opts: { connectTimeoutMs: number },
): Promise<EgressProxy> {
  let blocked: EgressBlockedError | null = null;
  let upstreamError: Error | null = null;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  };

  const server = net.createServer((client) => {
    track(client);
    let buf: Buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'connecting' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting') {
        const g = parseGreeting(buf);
        if (!g) return;
        if (buf[0] !== VERSION || !g.methods.includes(0)) {
          client.end(Buffer.from([VERSION, 0xff]));
          return;
        }
        client.write(Buffer.from([VERSION, 0])); // no authentication: the endpoint is ours alone
        buf = g.rest;
        stage = 'request';
      }
      if (stage === 'request') {
        const req = parseRequest(buf);
        if (!req) return;
        if (req === 'unsupported') {
          client.end(reply(REPLY.commandUnsupported));
          return;
        }
        stage = 'connecting';
        client.off('data', onData);
        client.pause();
        void connect(client, req);
      }
    };
    client.on('data', onData);
  });

  async function connect(client: net.Socket, req: Request) {
    let address: string;
    try {
      address = (await resolveAllowed(req.host, policy)).address;
    } catch (err) {
      if (err instanceof EgressBlockedError) {
        blocked ??= err;
        client.end(reply(REPLY.notAllowed));
      } else {
        client.end(reply(REPLY.hostUnreachable));
      }
      return;
    }
    if (client.destroyed) return;
    const upstream = net.connect({ host: address, port: req.port, timeout: opts.connectTimeoutMs });
    track(upstream);
    upstream.once('timeout', () => {
      upstreamError = Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' });
      upstream.destroy();
      client.end(reply(REPLY.hostUnreachable));
    });
    upstream.once('error', (err) => {
      upstreamError = err;
      if (!client.destroyed) client.end(reply(REPLY.refused));
    });
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      upstream.setNoDelay(true);
      client.write(reply(REPLY.succeeded));
      if (req.rest.length > 0) upstream.write(req.rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    blocked: () => blocked,
    upstreamError: () => upstreamError,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
