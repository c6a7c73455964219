import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The server's own DuckDB (transform SQL parsed at validation, dry-bound for drift) runs in a
// child process (host.mjs), started on first use and stopped once it has been idle IDLE_MS:
// DuckDB's library and databases (~40 MB resident, of which closing a database gives back only a
// few) never stay in an API process, and SQL that crashed DuckDB's parser would end that child,
// not the server (docs/operations.md, "The server's DuckDB process"). A run's transforms have
// their own DuckDB: in the worker's process, or on the embedded store in serve's transform host
// (the engine's transform-remote.ts).

/** How long the child stays after its last request and session ended. */
export const IDLE_MS = 30_000;

export type DuckHostErrorCode = 'UNAVAILABLE' | 'STOPPED' | 'FAILED';

export class DuckHostError extends Error {
  constructor(
    readonly code: DuckHostErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DuckHostError';
  }
}

/** An empty in-memory DuckDB of the child's, with no external access. */
export type DuckSession = {
  /** The statement's rows, each an array of JSON values (BIGINT and DuckDB's value types as text). */
  run(sql: string, params?: (string | number | boolean | null)[]): Promise<unknown[][]>;
  /** Frees the database; it is not awaited. */
  close(): void;
};

type Reply = { id: number; ok?: unknown; error?: string; unavailable?: string };
type Pending = { resolve(v: unknown): void; reject(e: Error): void };

const script = () => fileURLToPath(new URL('./host.mjs', import.meta.url));

export class DuckHost {
  private child: ChildProcess | null = null;
  /** Counts the children started: a session belongs to one. */
  private generation = 0;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private sessions = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The session json_serialize_sql runs on, in the current child. */
  private parser: Promise<DuckSession> | null = null;

  constructor(private readonly idleMs = IDLE_MS) {}

  /** The child's process id while it runs (tests stop it). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private start(): ChildProcess {
    const child = fork(script(), [], { execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    const generation = ++this.generation;
    child.on('message', (reply: Reply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.unavailable !== undefined)
        p.reject(
          new DuckHostError('UNAVAILABLE', `DuckDB is not installed on this server: ${reply.unavailable}`),
        );
      else if (reply.error !== undefined) p.reject(new DuckHostError('FAILED', reply.error));
      else p.resolve(reply.ok);
      this.settle();
    });
    const ended = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.generation !== generation) return;
      // Its sessions are gone with it.
      this.generation++;
      this.child = null;
      this.parser = null;
      this.sessions = 0;
      const err = new DuckHostError(
        'STOPPED',
        `the DuckDB process stopped (${signal ?? `exit code ${code}`}) before it answered`,
      );
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.settle();
    };
    child.on('exit', ended);
    child.on('error', () => ended(null, null));
    return child;
  }

  /** Keeps the parent alive only while it waits for an answer; stops an idle child. */
  private settle() {
    const child = this.child;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (!child) return;
    if (this.pending.size > 0) {
      child.ref();
      child.channel?.ref();
      return;
    }
    child.unref();
    child.channel?.unref();
    if (this.sessions > 0) return;
    this.idleTimer = setTimeout(() => {
      if (this.child !== child || this.pending.size > 0 || this.sessions > 0) return;
      this.stop();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private request(msg: Record<string, unknown>, generation?: number): Promise<unknown> {
    if (generation !== undefined && generation !== this.generation)
      return Promise.reject(new DuckHostError('STOPPED', 'the DuckDB process of this session has stopped'));
    this.child ??= this.start();
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.send({ ...msg, id }, (err) => {
      const p = this.pending.get(id);
      if (!err || !p) return;
      this.pending.delete(id);
      p.reject(new DuckHostError('STOPPED', `the DuckDB process did not take the request: ${err.message}`));
      this.settle();
    });
    this.settle();
    return reply;
  }

  private async session(counted: boolean): Promise<DuckSession> {
    if (counted) this.sessions++;
    const opening = this.request({ op: 'open' });
    // The child that opens it (request starts one when there is none).
    const generation = this.generation;
    let handle: number;
    try {
      handle = (await opening) as number;
    } catch (err) {
      if (counted) this.sessions = Math.max(0, this.sessions - 1);
      this.settle();
      throw err;
    }
    let closed = false;
    return {
      run: (sql, params) => {
        if (closed) return Promise.reject(new DuckHostError('FAILED', 'the DuckDB session is closed'));
        return this.request({ op: 'run', handle, sql, params }, generation) as Promise<unknown[][]>;
      },
      close: () => {
        if (closed) return;
        closed = true;
        if (generation !== this.generation) return;
        if (counted) this.sessions = Math.max(0, this.sessions - 1);
        this.request({ op: 'close', handle }, generation).catch(() => {});
      },
    };
  }

  /** A database of its own for the caller, until it closes it (the child stays while it is open). */
  open(): Promise<DuckSession> {
    return this.session(true);
  }

  /** DuckDB's json_serialize_sql of `sql`: its parse tree, or `{"error": true, …}`, as text. */
  async serialize(sql: string): Promise<string> {
    this.parser ??= this.session(false);
    const parser = this.parser;
    try {
      const rows = await (await parser).run('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
      return String(rows[0][0]);
    } catch (err) {
      // Not kept after a failure: the next call opens another.
      if (this.parser === parser) {
        this.parser = null;
        parser.then((s) => s.close()).catch(() => {});
      }
      throw err;
    }
  }

  /** Stops the child now (the next request starts another). */
  stop(): void {
    const child = this.child;
    if (!child) return;
    this.generation++;
    this.child = null;
    this.parser = null;
    this.sessions = 0;
    const err = new DuckHostError('STOPPED', 'the DuckDB process was stopped before it answered');
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    // Closing the channel ends the child (host.mjs); killed if it is stuck in a native call.
    if (child.connected) child.disconnect();
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    kill.unref();
    child.once('exit', () => clearTimeout(kill));
  }
}

let shared: DuckHost | null = null;

/** The process's DuckDB child. */
export const duckHost = (): DuckHost => (shared ??= new DuckHost());
