import { describe, expect, it } from 'vitest';
import { readServedJson } from './index';

// A worker's warm start reads its made-up records through the HTTP source, from a server of its
// own (docs/operations.md#a-workers-warm-start).

async function* array(records: unknown[]) {
  const text = JSON.stringify(records);
  // In pieces that cut records and strings apart, as a socket does.
  for (let i = 0; i < text.length; i += 7) yield Buffer.from(text.slice(i, i + 7));
}

const records = Array.from({ length: 50 }, (_, i) => ({
  id: i,
  note: `a "quoted", [bracket] ${i}`,
  at: null,
}));

describe('readServedJson', () => {
  it('hands on the served array as the HTTP source does: one record a line, every record counted', async () => {
    const { payload, close } = await readServedJson(() => array(records));
    let text = '';
    try {
      if (!payload.array) throw new Error('no array bytes');
      for await (const chunk of payload.array.chunks) text += Buffer.from(chunk).toString();
      expect(payload.array.lines).toBe(true);
      expect(payload.array.count()).toBe(records.length);
    } finally {
      await close();
    }
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
  });

  it('ends its server: closing twice, or before the records were read, is harmless', async () => {
    const { close } = await readServedJson(() => array(records));
    await close();
    await close();
  });
});
