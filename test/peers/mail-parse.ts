// Just enough RFC 5322 / MIME parsing to assert on what nodemailer sends.
// Kept in-house on purpose: a full parser package would be one more dependency
// for a test peer, and we only need headers plus the text/plain body.

export type ParsedMail = {
  headers: Record<string, string>;
  from: string;
  to: string[];
  subject: string;
  text: string;
};

type Part = { headers: Record<string, string>; body: string };

// Header names are lower-cased; folded continuation lines are joined back.
function splitPart(raw: string): Part {
  const normalized = raw.replace(/\r\n/g, '\n');
  const sep = normalized.indexOf('\n\n');
  const head = sep === -1 ? normalized : normalized.slice(0, sep);
  const body = sep === -1 ? '' : normalized.slice(sep + 2);
  const headers: Record<string, string> = {};
  let last = '';
  for (const line of head.split('\n')) {
    if (/^[ \t]/.test(line) && last) {
      headers[last] += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    // First occurrence wins, like most MUAs do for Subject/From/To.
    if (!(last in headers)) headers[last] = line.slice(colon + 1).trim();
    else last = '';
  }
  return { headers, body };
}

// Soft line breaks ("=" at end of line) are removed, =XX become bytes, then UTF-8.
export function decodeQuotedPrintable(input: string): string {
  // A multi-byte UTF-8 character is a run of consecutive =XX escapes, so decode whole runs.
  return input
    .replace(/=\r?\n/g, '')
    .replace(/(?:=[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/=/g, ''), 'hex').toString('utf8'));
}

function decodeBody(part: Part): string {
  const encoding = (part.headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body);
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return part.body;
}

// nodemailer encodes non-ASCII subjects as RFC 2047 encoded-words (=?UTF-8?Q?...?=).
function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g, (_m, _charset, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}

// '"Name, Jr" <a@x>, b@y' -> ['a@x', 'b@y']; quoted display names are dropped first
// so commas inside them don't split addresses.
function parseAddresses(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .split(',')
    .map((chunk) => (/<([^>]*)>/.exec(chunk)?.[1] ?? chunk).trim())
    .filter(Boolean);
}

// Depth-first search for the first text/plain leaf of a (possibly nested) multipart.
function findText(part: Part): string | undefined {
  const type = part.headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const chunks = part.body.split(`--${boundary}`).slice(1);
    for (const chunk of chunks) {
      if (chunk.startsWith('--')) break;
      const found = findText(splitPart(chunk.replace(/^\n/, '')));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!/^text\/plain/i.test(type)) return undefined;
  return decodeBody(part);
}

export function parseMail(raw: string): ParsedMail {
  const root = splitPart(raw);
  const text = (findText(root) ?? '').replace(/\n$/, '');
  return {
    headers: root.headers,
    from: parseAddresses(root.headers.from)[0] ?? '',
    to: parseAddresses(root.headers.to),
    subject: decodeEncodedWords(root.headers.subject ?? ''),
    text,
  };
}
