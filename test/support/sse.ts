import http from 'node:http';

export type SseEvent = { event: string; data: any; id?: string };

export type SseClient = {
  status: number;
  /** The parsed JSON body of an answer that did not open a stream (an error wrapper). */
  json: any;
  headers: http.IncomingHttpHeaders;
  /** Every event received so far, in order. */
  events: SseEvent[];
  /**
   * The first event with this name, received already or still to come; rejects when the stream
   * ends without it or after timeoutMs.
   */
  waitFor(event: string, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server has closed the stream. */
  closed: Promise<void>;
  /** Drops the connection, as a browser tab that goes away. */
  close(): void;
};

/**
 * A server-sent-event client over a real HTTP connection (light-my-request waits for the end of
 * a response, which a stream never reaches while it lasts).
 */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const waiters = new Set<{ event: string; done(e: SseEvent | null): void }>();
      let buffer = '';
      let ended = false;
      let markClosed!: () => void;
      const closed = new Promise<void>((r) => {
        markClosed = r;
      });
      const finish = () => {
        if (ended) return;
        ended = true;
        for (const w of waiters) w.done(null);
        markClosed();
      };
      const client: SseClient = {
        status: res.statusCode ?? 0,
        json: undefined,
        headers: res.headers,
        events,
        closed,
        close: () => req.destroy(),
        waitFor(event, timeoutMs = 15_000) {
          const have = events.find((e) => e.event === event);
          if (have) return Promise.resolve(have);
          return new Promise((ok, fail) => {
            if (ended) return fail(new Error(`the stream ended without "${event}"; got ${names(events)}`));
            const timer = setTimeout(() => w.done(null), timeoutMs);
            const w = {
              event,
              done(e: SseEvent | null) {
                clearTimeout(timer);
                waiters.delete(w);
                if (e) ok(e);
                else fail(new Error(`no "${event}" event; got ${names(events)}`));
              },
            };
            waiters.add(w);
          });
        },
      };
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        res.on('data', (c: string) => {
          buffer += c;
        });
        res.on('end', () => {
          client.json = buffer ? JSON.parse(buffer) : undefined;
          finish();
          resolve(client);
        });
        return;
      }
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const e: SseEvent = {
            event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
            data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null'),
            id: /^id: (.*)$/m.exec(block)?.[1],
          };
          events.push(e);
          for (const w of [...waiters]) if (w.event === e.event) w.done(e);
        }
      });
      res.on('end', finish);
      res.on('close', finish);
      resolve(client);
    });
    req.on('error', (err) => {
      // A connection we dropped ourselves is not an error.
      if (!req.destroyed || (err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
  });
}

const names = (events: SseEvent[]) => JSON.stringify(events.map((e) => e.event));
