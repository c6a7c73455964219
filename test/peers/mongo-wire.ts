import { createServer, type Socket } from 'node:net';
import { Binary, deserialize, Int32, Long, serialize } from 'bson';
import { CommandError, type Doc, num } from './mongo-query';
import { authFailed, ScramConversation, type ScramUser, scramUser } from './mongo-scram';
import { Store } from './mongo-store';

// A MongoDB server speaking the wire protocol, in memory, for the connector's tests (no MongoDB
// server can be installed here; see PEERS.md). It answers OP_MSG and the legacy OP_QUERY the
// driver sends for its first hello, authenticates with SCRAM-SHA-256 and implements the
// commands the connector uses: hello/isMaster, buildInfo, ping, listCollections, find,
// getMore, killCursors, aggregate, insert, update, delete, drop, dropDatabase, endSessions.
// Errors are real command errors ({ok: 0, errmsg, code, codeName}). Tests drive it through the
// official driver only.

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const MORE_TO_COME = 1 << 1;
const CHECKSUM = 1 << 0;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

export type MongoWireOptions = {
  /** Users as {db, user, password}; with users, every data command needs authentication. */
  users?: { db: string; user: string; password: string }[];
  /** Answer hello as the primary of this replica set, announcing other members as well. */
  replicaSet?: { name: string; otherMembers: string[] };
};

export type MongoWirePeer = {
  port: number;
  host: string;
  /** Commands received, by name, for assertions on what the driver sent. */
  commands: string[];
  close(): Promise<void>;
};

type Cursor = { ns: string; docs: Doc[]; pos: number };
type Session = { authenticated: boolean; scram: ScramConversation | null };

const ok = (doc: Doc = {}) => ({ ...doc, ok: 1 });

export async function startMongoWire(opts: MongoWireOptions = {}): Promise<MongoWirePeer> {
  const users = new Map<string, ScramUser>();
  for (const u of opts.users ?? []) users.set(`${u.db}.${u.user}`, scramUser(u.password));
  const requireAuth = users.size > 0;
  const store = new Store();
  const cursors = new Map<bigint, Cursor>();
  const commands: string[] = [];
  let nextCursor = 1000n;
  let port = 0;
  let connections = 0;
  const sockets = new Set<Socket>();

  function openCursor(ns: string, docs: Doc[], firstBatch: number, singleBatch: boolean) {
    const c: Cursor = { ns, docs, pos: 0 };
    const batch = takeBatch(c, firstBatch);
    let id = 0n;
    if (!singleBatch && c.pos < docs.length) {
      id = nextCursor++;
      cursors.set(id, c);
    }
    return ok({ cursor: { id: Long.fromBigInt(id), ns, firstBatch: batch } });
  }

  function takeBatch(c: Cursor, size: number): Doc[] {
    const out: Doc[] = [];
    let bytes = 0;
    const limit = size > 0 ? size : Number.POSITIVE_INFINITY;
    while (c.pos < c.docs.length && out.length < limit) {
      const doc = c.docs[c.pos];
      // The server's 16 MiB batch cap; only measured when the batch is not bounded by count.
      if (size <= 0) {
        bytes += serialize(doc).length;
        if (bytes > MAX_BATCH_BYTES && out.length > 0) break;
      }
      out.push(doc);
      c.pos++;
    }
    return out;
  }

  function hello(cmd: Doc, connectionId: number) {
    const reply: Doc = {
      helloOk: true,
      isWritablePrimary: true,
      ismaster: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
    };
    if (typeof cmd.saslSupportedMechs === 'string') reply.saslSupportedMechs = ['SCRAM-SHA-256'];
    if (opts.replicaSet) {
      const me = `127.0.0.1:${port}`;
      Object.assign(reply, {
        setName: opts.replicaSet.name,
        setVersion: new Int32(1),
        hosts: [me, ...opts.replicaSet.otherMembers],
        primary: me,
        me,
      });
    }
    return ok(reply);
  }

  function run(cmd: Doc, session: Session, connectionId: number): Doc {
    const name = Object.keys(cmd)[0] ?? '';
    commands.push(name);
    const db: string = cmd.$db ?? 'admin';
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return hello(cmd, connectionId);
      case 'ping':
      case 'endSessions':
        return ok();
      case 'buildInfo':
      case 'buildinfo':
        return ok({ version: '7.0.0-sluice-peer', versionArray: [7, 0, 0, 0].map((n) => new Int32(n)) });
      case 'saslStart': {
        if (cmd.mechanism !== 'SCRAM-SHA-256')
          throw new CommandError(
            334,
            'MechanismUnavailable',
            `Received authentication for mechanism ${cmd.mechanism} which is not enabled`,
          );
        session.scram = new ScramConversation((user) => users.get(`${db}.${user}`));
        const payload = session.scram.start(Buffer.from((cmd.payload as Binary).buffer).toString());
        return ok({ conversationId: new Int32(1), done: false, payload: new Binary(Buffer.from(payload)) });
      }
      case 'saslContinue': {
        if (!session.scram) throw authFailed();
        const scram = session.scram;
        session.scram = null;
        const final = scram.finish(Buffer.from((cmd.payload as Binary).buffer).toString());
        session.authenticated = true;
        return ok({ conversationId: new Int32(1), done: true, payload: new Binary(Buffer.from(final)) });
      }
      default:
        break;
    }
    if (requireAuth && !session.authenticated)
      throw new CommandError(13, 'Unauthorized', `Command ${name} requires authentication`);
    const coll = (create: boolean) => store.get(db, String(cmd[name]), create);
    switch (name) {
      case 'listCollections': {
        const docs = store
          .collections(db)
          .filter((c) => (cmd.filter?.name === undefined ? true : c.name === cmd.filter.name))
          .map((c) => ({ name: c.name, type: 'collection', options: {}, info: { readOnly: false } }));
        return openCursor(`${db}.$cmd.listCollections`, docs, num(cmd.cursor?.batchSize ?? 0), false);
      }
      case 'find': {
        const docs =
          coll(false)?.find(cmd.filter, {
            projection: cmd.projection,
            sort: cmd.sort,
            skip: cmd.skip === undefined ? 0 : num(cmd.skip),
            limit: cmd.limit === undefined ? 0 : num(cmd.limit),
          }) ?? [];
        const batch = cmd.batchSize === undefined ? 101 : num(cmd.batchSize);
        const single = cmd.singleBatch === true || (cmd.limit !== undefined && num(cmd.limit) < 0);
        return openCursor(`${db}.${cmd.find}`, docs, batch, single);
      }
      case 'aggregate': {
        const docs = coll(false)?.aggregate(cmd.pipeline ?? []) ?? [];
        return openCursor(`${db}.${cmd.aggregate}`, docs, num(cmd.cursor?.batchSize ?? 101), false);
      }
      case 'getMore': {
        const id = (cmd.getMore as Long).toBigInt();
        const c = cursors.get(id);
        if (!c) throw new CommandError(43, 'CursorNotFound', `cursor id ${id} not found`);
        const batch = takeBatch(c, cmd.batchSize === undefined ? 0 : num(cmd.batchSize));
        const done = c.pos >= c.docs.length;
        if (done) cursors.delete(id);
        return ok({ cursor: { id: Long.fromBigInt(done ? 0n : id), ns: c.ns, nextBatch: batch } });
      }
      case 'killCursors': {
        const ids = (cmd.cursors ?? []) as Long[];
        const killed = ids.filter((i) => cursors.delete(i.toBigInt()));
        return ok({ cursorsKilled: killed, cursorsNotFound: [], cursorsAlive: [], cursorsUnknown: [] });
      }
      case 'insert': {
        const c = coll(true)!;
        const docs = (cmd.documents ?? []) as Doc[];
        const writeErrors: Doc[] = [];
        let n = 0;
        for (const [index, doc] of docs.entries()) {
          try {
            c.insert(doc);
            n++;
          } catch (err) {
            if (!(err instanceof CommandError)) throw err;
            writeErrors.push({ index, code: err.code, errmsg: err.message });
            if (cmd.ordered !== false) break;
          }
        }
        return ok({ n, ...(writeErrors.length ? { writeErrors } : {}) });
      }
      case 'update': {
        const c = coll(true)!;
        let n = 0;
        let nModified = 0;
        const upserted: Doc[] = [];
        const writeErrors: Doc[] = [];
        for (const [index, u] of ((cmd.updates ?? []) as Doc[]).entries()) {
          try {
            const r = c.update(u.q ?? {}, u.u, u.upsert === true, u.multi === true);
            n += r.n;
            nModified += r.modified;
            if (r.upserted !== undefined) upserted.push({ index, _id: r.upserted });
          } catch (err) {
            if (!(err instanceof CommandError)) throw err;
            writeErrors.push({ index, code: err.code, errmsg: err.message });
            if (cmd.ordered !== false) break;
          }
        }
        return ok({
          n,
          nModified,
          ...(upserted.length ? { upserted } : {}),
          ...(writeErrors.length ? { writeErrors } : {}),
        });
      }
      case 'delete': {
        const c = coll(false);
        let n = 0;
        for (const d of (cmd.deletes ?? []) as Doc[]) n += c ? c.delete(d.q ?? {}, num(d.limit ?? 0)) : 0;
        return ok({ n });
      }
      case 'create':
        coll(true);
        return ok();
      case 'drop':
        if (!store.drop(db, String(cmd.drop)))
          throw new CommandError(26, 'NamespaceNotFound', 'ns not found');
        return ok();
      case 'dropDatabase':
        store.drop(db);
        return ok();
      default:
        throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`);
    }
  }

  function answer(cmd: Doc, session: Session, connectionId: number): Doc {
    try {
      return run(cmd, session, connectionId);
    } catch (err) {
      if (err instanceof CommandError)
        return { ok: 0, errmsg: err.message, code: err.code, codeName: err.codeName };
      return { ok: 0, errmsg: String((err as Error)?.message ?? err), code: 1, codeName: 'InternalError' };
    }
  }

  let requestIds = 1;
  function frame(opCode: number, responseTo: number, body: Buffer): Buffer {
    const header = Buffer.alloc(16);
    header.writeInt32LE(16 + body.length, 0);
    header.writeInt32LE(requestIds++, 4);
    header.writeInt32LE(responseTo, 8);
    header.writeInt32LE(opCode, 12);
    return Buffer.concat([header, body]);
  }

  const decode = (b: Buffer) => deserialize(b, { promoteValues: false, promoteBuffers: false });

  /** OP_MSG: flag bits, then a body section (kind 0) and document sequences (kind 1). */
  function opMsg(msg: Buffer): { cmd: Doc; flags: number } {
    const flags = msg.readUInt32LE(16);
    const end = msg.length - (flags & CHECKSUM ? 4 : 0);
    let at = 20;
    let cmd: Doc = {};
    const sequences: [string, Doc[]][] = [];
    while (at < end) {
      const kind = msg[at++];
      const size = msg.readInt32LE(at);
      if (kind === 0) {
        cmd = decode(msg.subarray(at, at + size));
        at += size;
      } else {
        const stop = at + size;
        let p = at + 4;
        const nul = msg.indexOf(0, p);
        const id = msg.toString('utf8', p, nul);
        p = nul + 1;
        const docs: Doc[] = [];
        while (p < stop) {
          const len = msg.readInt32LE(p);
          docs.push(decode(msg.subarray(p, p + len)));
          p += len;
        }
        sequences.push([id, docs]);
        at = stop;
      }
    }
    for (const [id, docs] of sequences) cmd[id] = docs;
    return { cmd, flags };
  }

  function handle(socket: Socket, msg: Buffer, session: Session, connectionId: number) {
    const requestId = msg.readInt32LE(4);
    const opCode = msg.readInt32LE(12);
    if (opCode === OP_MSG) {
      const { cmd, flags } = opMsg(msg);
      const reply = answer(cmd, session, connectionId);
      if (flags & MORE_TO_COME) return;
      const body = Buffer.from(serialize(reply, { ignoreUndefined: true }));
      const head = Buffer.alloc(5);
      head.writeUInt32LE(0, 0);
      head[4] = 0;
      socket.write(frame(OP_MSG, requestId, Buffer.concat([head, body])));
    } else if (opCode === OP_QUERY) {
      // flags, full collection name (cstring), skip, return, then the query document.
      const nul = msg.indexOf(0, 20);
      const docAt = nul + 1 + 8;
      let query = decode(msg.subarray(docAt, docAt + msg.readInt32LE(docAt)));
      if (query.$query) query = query.$query;
      const reply = Buffer.from(serialize(answer(query, session, connectionId)));
      const head = Buffer.alloc(20);
      head.writeInt32LE(0, 0);
      head.writeBigInt64LE(0n, 4);
      head.writeInt32LE(0, 12);
      head.writeInt32LE(1, 16);
      socket.write(frame(OP_REPLY, requestId, Buffer.concat([head, reply])));
    } else {
      socket.destroy();
    }
  }

  const server = createServer((socket) => {
    sockets.add(socket);
    const connectionId = ++connections;
    const session: Session = { authenticated: false, scram: null };
    let pending: Buffer[] = [];
    let first = true;
    let pendingBytes = 0;
    socket.on('data', (chunk) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < 4) return;
      let buf = pending.length === 1 ? pending[0] : Buffer.concat(pending);
      // Not a MongoDB message: close, as mongod does ("SSL handshake received but server is
      // started without SSL support" for a TLS record: type 0x16, version 3.x).
      // Only the first bytes of a connection are checked (the driver starts with a small hello).
      const tlsRecord = first && buf[0] === 0x16 && buf[1] === 0x03 && buf[2] <= 0x04;
      first = false;
      if (buf.length >= 4 && (tlsRecord || buf.readInt32LE(0) < 16 || buf.readInt32LE(0) > 48_000_000)) {
        socket.destroy();
        return;
      }
      while (buf.length >= 4 && buf.length >= buf.readInt32LE(0)) {
        const len = buf.readInt32LE(0);
        try {
          handle(socket, buf.subarray(0, len), session, connectionId);
        } catch {
          socket.destroy();
          return;
        }
        buf = buf.subarray(len);
      }
      pending = buf.length > 0 ? [buf] : [];
      pendingBytes = buf.length;
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  return {
    port,
    host: `127.0.0.1:${port}`,
    commands,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
