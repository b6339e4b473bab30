import { readFile } from 'node:fs/promises';

export type JsonObject = { [key: string]: unknown };

export interface OperationObject {
  readonly parameters?: readonly {
    name: string;
    in: string;
    required?: boolean;
    schema?: JsonObject;
  }[];
  readonly requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonObject }> };
  readonly responses: Record<string, { content?: Record<string, { schema?: JsonObject }> }>;
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, OperationObject>>;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * OpenAPI 3.0 schema → JSON Schema for ajv: `nullable: true` becomes a `null` type (and a
 * `null` enum member, since ajv checks `enum` on its own).
 */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean') continue;
    out[key] = toJsonSchema(value);
  }
  if (node.nullable !== true) return out;
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  return out;
}

/**
 * Hetzner writes response ranges as `4xx`/`5xx`; OpenAPI (and its tools) spell them `4XX`.
 * Rewritten in place once, on the freshly parsed document.
 */
function rewriteRangeKeys(document: OpenApiDocument): void {
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const key of Object.keys(operation.responses)) {
        if (!/^[1-5]xx$/.test(key)) continue;
        operation.responses[key.toUpperCase()] = operation.responses[key]!;
        delete operation.responses[key];
      }
    }
}

const documents = new Map<string, Promise<OpenApiDocument>>();

/** Parses the 3.4 MB description once per path and process. */
export function readDocument(file: string): Promise<OpenApiDocument> {
  let loading = documents.get(file);
  if (!loading) {
    loading = readFile(file, 'utf8').then((text) => {
      const document = JSON.parse(text) as OpenApiDocument;
      if (!isObject(document.paths)) throw new Error(`${file} has no paths`);
      rewriteRangeKeys(document);
      return document;
    });
    loading.catch(() => documents.delete(file));
    documents.set(file, loading);
  }
  return loading;
}

/** Matches `/servers/123/actions/poweron` to `/servers/{id}/actions/poweron`. */
export function matchPathTemplate(document: OpenApiDocument, path: string): string | undefined {
  const have = path.split('/');
  let best: { template: string; literals: number } | undefined;
  for (const template of Object.keys(document.paths)) {
    const want = template.split('/');
    if (want.length !== have.length) continue;
    let literals = 0;
    const fits = want.every((segment, i) => {
      if (segment.startsWith('{')) return have[i] !== '';
      literals += 1;
      return segment === have[i];
    });
    // `/servers/actions` beats `/servers/{id}`: the more literal segments, the better.
    if (fits && (!best || literals > best.literals)) best = { template, literals };
  }
  return best?.template;
}
