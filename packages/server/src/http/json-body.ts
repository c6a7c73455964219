import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { AppError, type ValidationIssue } from './errors';
import { loneSurrogateIssue } from './unicode';

/**
 * What a JSON request body may hold beyond its size (`SLUICE_BODY_LIMIT_BYTES`): docs/operations.md
 * ("Request bodies") lists them with what each answers. Every one is checked in a single pass over
 * the text before `JSON.parse`, so no later walk of a body is longer than its bytes.
 */
export const BODY_LIMITS = {
  /** Objects and arrays nested inside each other; `{}` is depth 1. */
  depth: 64,
  /** Keys of one object. */
  keys: 10_000,
  /** Elements of one array. */
  items: 10_000,
  /** Characters (UTF-16 code units) of one string or key. */
  stringLength: 262_144,
} as const;

export type BodyLimits = { [K in keyof typeof BODY_LIMITS]: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** One open object or array: where the walk is inside it, which is the path's segment for it. */
type Frame = {
  array: boolean;
  index: number;
  key: string | null;
  keys: Set<string> | null;
  expectKey: boolean;
};

/** The dotted path of the frames below `upTo` (exclusive), plus `last`; the root is `(body)`. */
function pathOf(stack: Frame[], upTo: number, last?: string): string {
  const parts: string[] = [];
  for (let f = 0; f < upTo; f++) {
    const frame = stack[f]!;
    if (frame.array) parts.push(String(frame.index));
    else if (frame.key !== null) parts.push(frame.key);
  }
  if (last !== undefined) parts.push(last);
  return parts.length > 0 ? parts.join('.') : '(body)';
}

function hex4(text: string, at: number): number {
  if (at + 4 > text.length) return -1;
  const s = text.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(s) ? Number.parseInt(s, 16) : -1;
}

type ScanResult = { issue: ValidationIssue } | { end: string } | null;

/**
 * One linear pass over JSON text with a single stack of open objects and arrays (never a copy of
 * the path per level). Finds the first nesting, key-count, element-count or string-length limit
 * crossed, the first key repeated in its object and the first lone UTF-16 surrogate escape, each
 * with its path. It trusts `JSON.parse` to judge the grammar afterwards: on text that is not JSON
 * it still ends in linear time. Otherwise `end` is the path where the text stops (`(body)` for
 * complete JSON; inside a cut-off string, that string's); null means a string that is not JSON.
 */
function scan(text: string, limits: BodyLimits): ScanResult {
  const stack: Frame[] = [];
  const n = text.length;
  let backslash = -1;
  let quote = -1;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const top = stack.length > 0 ? stack[stack.length - 1]! : undefined;
      const isKey = top !== undefined && !top.array && top.expectKey;
      let j = i + 1;
      let length = 0;
      let escaped = false;
      let lone = false;
      while (j < n) {
        // Runs without escapes are skipped by indexOf. Both positions only move forward (an
        // escaped quote is passed over with its escape), so the searches add up to one pass.
        if (quote < j) {
          quote = text.indexOf('"', j);
          if (quote < 0) quote = n;
        }
        if (backslash < j) {
          backslash = text.indexOf('\\', j);
          if (backslash < 0) backslash = n;
        }
        if (quote <= backslash) {
          length += quote - j;
          j = quote;
          break;
        }
        length += backslash - j;
        j = backslash;
        escaped = true;
        if (text.charCodeAt(j + 1) !== LOWER_U) {
          j += 2;
          length++;
          continue;
        }
        const unit = hex4(text, j + 2);
        if (unit < 0) return null; // not a JSON escape: JSON.parse refuses the body
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high surrogate is a character only with the low one right after it.
          if (text.charCodeAt(j + 6) === BACKSLASH && text.charCodeAt(j + 7) === LOWER_U) {
            const low = hex4(text, j + 8);
            if (low >= 0xdc00 && low <= 0xdfff) {
              j += 12;
              length += 2;
              continue;
            }
          }
          lone = true;
        } else if (unit >= 0xdc00 && unit <= 0xdfff) {
          lone = true;
        }
        j += 6;
        length++;
      }
      if (j >= n) return { end: isKey ? pathOf(stack, stack.length - 1) : pathOf(stack, stack.length) };
      if (isKey) {
        const objectAt = stack.length - 1;
        let key: string;
        if (!escaped) key = text.slice(i + 1, j);
        else {
          try {
            key = JSON.parse(text.slice(i, j + 1)) as string;
          } catch {
            return null; // not a JSON string: JSON.parse refuses the body
          }
        }
        if (lone) {
          return {
            issue: loneSurrogateIssue(pathOf(stack, objectAt, key.replace(LONE_SURROGATES, '\uFFFD'))),
          };
        }
        if (length > limits.stringLength) return { issue: tooLongKey(pathOf(stack, objectAt), limits) };
        const keys = top.keys!;
        if (keys.has(key)) {
          return {
            issue: {
              path: pathOf(stack, objectAt, key),
              code: 'duplicate_key',
              message: 'a key may appear only once in an object',
            },
          };
        }
        keys.add(key);
        if (keys.size > limits.keys) {
          return {
            issue: {
              path: pathOf(stack, objectAt),
              code: 'too_many_keys',
              message: `an object may have at most ${limits.keys} keys`,
            },
          };
        }
        top.key = key;
        top.expectKey = false;
      } else {
        if (lone) return { issue: loneSurrogateIssue(pathOf(stack, stack.length)) };
        if (length > limits.stringLength) {
          return {
            issue: {
              path: pathOf(stack, stack.length),
              code: 'string_too_long',
              message: `a string may be at most ${limits.stringLength} characters`,
            },
          };
        }
      }
      i = j + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= limits.depth) {
        return {
          issue: {
            path: pathOf(stack, stack.length),
            code: 'too_deep',
            message: `objects and arrays may be nested at most ${limits.depth} levels deep`,
          },
        };
      }
      const array = c === OPEN_ARRAY;
      stack.push({ array, index: 0, key: null, keys: array ? null : new Set(), expectKey: true });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA && stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (!top.array) top.expectKey = true;
      else if (++top.index >= limits.items) {
        return {
          issue: {
            path: pathOf(stack, stack.length - 1),
            code: 'too_many_items',
            message: `an array may have at most ${limits.items} elements`,
          },
        };
      }
    }
    i++;
  }
  return { end: pathOf(stack, stack.length) };
}

function tooLongKey(objectPath: string, limits: BodyLimits): ValidationIssue {
  return {
    path: objectPath,
    code: 'string_too_long',
    message: `a key may be at most ${limits.stringLength} characters`,
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Offset of the first byte that is not part of well-formed UTF-8 (the lossy decoding differs there). */
function firstInvalidByte(bytes: Buffer): number {
  const lossy = Buffer.from(bytes.toString('utf8'), 'utf8');
  let i = 0;
  while (i < bytes.length && bytes[i] === lossy[i]) i++;
  return i;
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false; error: AppError };

function refuse(issue: ValidationIssue): ParsedBody {
  const where = issue.path.length > 200 ? `${issue.path.slice(0, 200)}…` : issue.path;
  return {
    ok: false,
    error: new AppError('VALIDATION_FAILED', `the request body is not valid at ${where}: ${issue.message}`, {
      validationErrors: [issue],
    }),
  };
}

/**
 * A JSON request body from its bytes: strict UTF-8, within {@link BODY_LIMITS}, no repeated key,
 * no lone surrogate, no `__proto__`/`constructor.prototype` key. Empty (or blank) is `undefined`.
 */
export function parseJsonBody(bytes: Buffer, limits: BodyLimits = BODY_LIMITS): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    const at = firstInvalidByte(bytes);
    const found = scan(bytes.subarray(0, at).toString('utf8'), limits);
    const path = found && 'end' in found ? found.end : '(body)';
    return refuse({
      path,
      code: 'invalid_utf8',
      message: `the body must be UTF-8; byte ${at} starts an invalid sequence`,
    });
  }
  if (text.trim() === '') return { ok: true, value: undefined };
  const found = scan(text, limits);
  if (found && 'issue' in found) return refuse(found.issue);
  try {
    return {
      ok: true,
      value: sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
    };
  } catch {
    return {
      ok: false,
      error: new AppError('VALIDATION_FAILED', 'the request body is not valid JSON', {
        validationErrors: [
          { path: '(body)', code: 'invalid_json', message: 'the request body is not valid JSON' },
        ],
      }),
    };
  }
}

/**
 * JSON only; an empty body is "no body" so action routes (`:revoke`) accept a bare POST. Installed
 * on the API host and on the app host (its own routes and the /api mount), so both parse requests
 * the same way. The checks are one pass over at most `SLUICE_BODY_LIMIT_BYTES`, like the parse
 * itself, so they stay in the parser (docs/operations.md, "Request bodies").
 */
export function installJsonBody(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    const parsed = parseJsonBody(body as Buffer);
    if (parsed.ok) done(null, parsed.value);
    else done(parsed.error, undefined);
  });
}
