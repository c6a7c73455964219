import type pg from 'pg';

// For the COPY readers' tests: a server's answer recorded byte for byte off a real client's
// socket, to be replayed through a reader in chunks cut anywhere.

type Stream = {
  listeners(e: 'data'): ((b: Buffer) => void)[];
  on(e: 'data', f: (b: Buffer) => void): void;
  removeListener(e: 'data', f: (b: Buffer) => void): void;
};

/** The server's bytes for the simple query `text`, from the first after it to its ReadyForQuery. */
export async function recordAnswer(client: pg.Client, text: string): Promise<Buffer> {
  const c = (client as unknown as { connection: { stream: Stream; query(text: string): void } }).connection;
  const handler = c.stream.listeners('data')[0];
  c.stream.removeListener('data', handler);
  const parts: Buffer[] = [];
  await new Promise<void>((resolve) => {
    const take = (b: Buffer) => {
      parts.push(b);
      const all = Buffer.concat(parts);
      for (let at = 0; at + 5 <= all.length; at += 1 + all.readUInt32BE(at + 1)) {
        if (all[at] === 0x5a && at + 6 <= all.length) {
          c.stream.removeListener('data', take);
          resolve();
          return;
        }
      }
    };
    c.stream.on('data', take);
    c.query(text);
  });
  c.stream.on('data', handler);
  return Buffer.concat(parts);
}
