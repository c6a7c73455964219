/** Reads standard input to its end; secrets (tokens, passwords) come this way, never as flags. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('(reading from standard input; end with Ctrl-D)\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** The first line of standard input, without its line ending. */
export async function readStdinLine(): Promise<string> {
  return (await readStdin()).split(/\r?\n/, 1)[0] ?? '';
}

export function printJson(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLines(lines: string[]) {
  process.stdout.write(`${lines.join('\n')}\n`);
}

type Column<T> = { header: string; value: (row: T) => unknown };

/** A plain aligned table for people; scripts use --json. */
export function printTable<T>(rows: T[], columns: Column<T>[]) {
  const cells = rows.map((r) =>
    columns.map((c) => {
      const v = c.value(r);
      if (v === null || v === undefined || v === '') return '-';
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    }),
  );
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  printLines([line(columns.map((c) => c.header)), ...cells.map(line)]);
}
