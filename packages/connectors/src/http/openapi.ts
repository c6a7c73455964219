import {
  type ConnectorContext,
  ConnectorError,
  type HttpOperationSummary,
  type SchemaDocument,
} from '../types';
import type { HttpConfig, HttpCredentials } from './config';
import { authHeaders } from './request';
import { hostOf, sendHttp } from './transport';

// Schema import of the HTTP connector: fetch the OpenAPI document through the egress guard,
// validate it (OpenAPI 3.x or Swagger 2.0, JSON or YAML) and keep a summary of its operations.

/** Imported documents are bounded well below the general response limit. */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// The parser names the document in its messages; it sees this instead of the real URL, whose
// query string may carry a token.
const DOCUMENT_NAME = 'https://openapi.invalid/document';

export async function importOpenApi(
  config: HttpConfig,
  credentials: HttpCredentials | null,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  if (!config.openapi_url) return { schema_type: 'empty', type: 'http' };
  const url = new URL(config.openapi_url);
  let text: string;
  try {
    const res = await sendHttp(
      {
        method: 'GET',
        url,
        headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.8' },
        // The API's credentials go only to the API's own origin, never to a third-party host.
        originHeaders: url.origin === new URL(config.base_url).origin ? authHeaders(credentials) : {},
        timeoutMs: config.openapi_fetch_timeout_seconds * 1000,
        maxBytes: MAX_DOCUMENT_BYTES,
      },
      ctx,
    );
    if (res.status < 200 || res.status >= 300) {
      throw new ConnectorError(
        'OPENAPI_UNREACHABLE',
        `the OpenAPI document at ${hostOf(url)} answered HTTP ${res.status}`,
      );
    }
    text = res.body.toString('utf8');
  } catch (err) {
    const e = err as ConnectorError;
    if (e.code === 'OPENAPI_UNREACHABLE' || e.code === 'PRIVATE_HOST_BLOCKED') throw e;
    if (e.code === 'RESPONSE_TOO_LARGE') {
      throw new ConnectorError(
        'INVALID_OPENAPI',
        `the OpenAPI document is larger than ${MAX_DOCUMENT_BYTES} bytes`,
      );
    }
    throw new ConnectorError(
      'OPENAPI_UNREACHABLE',
      `the OpenAPI document could not be fetched: ${e.message}`,
    );
  }
  return summarize(await parseDocument(text));
}

/** Validates the document; external `$ref`s stay unresolved, since following them would bypass the egress guard. */
export async function parseDocument(text: string): Promise<any> {
  // The parser loads on first use: only schema imports need it, pipeline runs never do.
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  try {
    return await SwaggerParser.validate(DOCUMENT_NAME, {
      resolve: {
        external: false,
        http: false,
        file: false,
        document: { order: 1, canRead: true, read: () => text },
      },
    } as any);
  } catch (err) {
    throw new ConnectorError('INVALID_OPENAPI', sanitizeParserMessage(err));
  }
}

function sanitizeParserMessage(err: unknown): string {
  const raw = String((err as Error)?.message ?? 'unknown error')
    .replaceAll(`"${DOCUMENT_NAME}"`, 'the document')
    .replaceAll(DOCUMENT_NAME, 'the document');
  const lines = raw
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const head = lines.slice(0, 4).join('; ');
  const more = lines.length > 4 ? ` (and ${lines.length - 4} more)` : '';
  const message = `the OpenAPI document is not valid: ${head}${more}`;
  return message.length > 500 ? `${message.slice(0, 499)}…` : message;
}

type RawParameter = { name?: unknown; in?: unknown; required?: unknown };

function parametersOf(list: unknown): Map<string, RawParameter> {
  const out = new Map<string, RawParameter>();
  if (!Array.isArray(list)) return out;
  for (const p of list as RawParameter[]) {
    if (p && typeof p.name === 'string' && typeof p.in === 'string') out.set(`${p.in}:${p.name}`, p);
  }
  return out;
}

const textOrNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

export function summarize(api: any): SchemaDocument {
  const operations: HttpOperationSummary[] = [];
  for (const [path, item] of Object.entries<any>(api?.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    const shared = parametersOf(item.parameters);
    for (const method of METHODS) {
      const op = item[method];
      if (!op || typeof op !== 'object') continue;
      // Operation-level parameters override path-level ones of the same name and location.
      const merged = new Map([...shared, ...parametersOf(op.parameters)]);
      const fields = responseFields(op.responses);
      operations.push({
        operation_id: textOrNull(op.operationId),
        method: method.toUpperCase(),
        path,
        summary: textOrNull(op.summary) ?? textOrNull(op.description)?.slice(0, 200) ?? null,
        tags: Array.isArray(op.tags) ? op.tags.filter((t: unknown) => typeof t === 'string') : [],
        parameters: [...merged.values()].map((p) => ({
          name: p.name as string,
          in: p.in as string,
          required: p.required === true,
        })),
        ...(fields.length > 0 ? { response_fields: fields } : {}),
      });
    }
  }
  return {
    schema_type: 'openapi',
    type: 'http',
    title: textOrNull(api?.info?.title),
    version: textOrNull(api?.info?.version),
    operations,
  };
}

const MAX_RESPONSE_FIELDS = 500;
const MAX_DEPTH = 6;

/**
 * The fields of an operation's success responses, flattened for drift reports:
 * `200.data[].id` with its JSON Schema type. The validator has already dereferenced internal
 * `$ref`s; cycles and deep nesting are cut off.
 */
export function responseFields(responses: unknown): { name: string; type: string }[] {
  const out: { name: string; type: string }[] = [];
  if (!responses || typeof responses !== 'object') return out;
  const seen = new Set<unknown>();
  const walk = (schema: any, path: string, depth: number) => {
    if (!schema || typeof schema !== 'object' || out.length >= MAX_RESPONSE_FIELDS) return;
    if (depth > MAX_DEPTH || seen.has(schema)) return;
    seen.add(schema);
    for (const part of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])])
      walk({ ...part, type: part.type }, path, depth + 1);
    const type = Array.isArray(schema.type) ? schema.type.find((t: unknown) => t !== 'null') : schema.type;
    if (type === 'array' || schema.items) {
      walk(schema.items, `${path}[]`, depth + 1);
    } else if (type === 'object' || schema.properties) {
      for (const [name, sub] of Object.entries<any>(schema.properties ?? {})) {
        const at = path ? `${path}.${name}` : name;
        const subType = Array.isArray(sub?.type) ? sub.type.find((t: unknown) => t !== 'null') : sub?.type;
        out.push({
          name: at,
          type: String(subType ?? (sub?.properties ? 'object' : sub?.items ? 'array' : 'unknown')),
        });
        walk(sub, at, depth + 1);
      }
    }
    seen.delete(schema);
  };
  for (const [status, res] of Object.entries<any>(responses)) {
    if (!/^2\d\d$|^2XX$/i.test(status) || !res) continue;
    // OpenAPI 3 keeps the schema under content (JSON first); Swagger 2 directly on the response.
    const content = res.content ?? {};
    const key = Object.keys(content).find((k) => /json/i.test(k)) ?? Object.keys(content)[0];
    walk(key ? content[key]?.schema : res.schema, status, 0);
  }
  return out;
}
