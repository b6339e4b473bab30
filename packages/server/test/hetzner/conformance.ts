import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  isObject,
  matchPathTemplate,
  type OpenApiDocument,
  type OperationObject,
  readDocument,
  toJsonSchema,
} from './openapi-document.js';

// ajv-formats is CommonJS with `exports.default`; under NodeNext its default import is the
// module object by type but the plugin function at run time.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  // Prices are `decimal` strings ("1.0000"); ajv-formats does not know the format.
  ajv.addFormat('decimal', /^-?\d+(\.\d+)?$/);
  return ajv;
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`).join('; ');
}

/**
 * Checks exchanges against Hetzner's OpenAPI description: request bodies, query parameter
 * names and values, and response bodies for their status. Schemas are compiled per operation
 * on first use (the whole document takes seconds). Mismatches are collected, never thrown.
 */
export class Conformance {
  readonly mismatches: string[] = [];
  private count = 0;
  private readonly ajv = newAjv(false);
  private readonly queryAjv = newAjv(true);
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {}

  /** Exchanges checked so far (requests and responses each count one). */
  get checked(): number {
    return this.count;
  }

  checkRequest(method: string, path: string, query: URLSearchParams, body: unknown): void {
    this.count += 1;
    const found = this.operation(method, path);
    if (!found) return;
    const { template, operation } = found;
    const where = `${method.toUpperCase()} ${path}`;
    const parameters = (operation.parameters ?? []).filter((p) => p.in === 'query');
    const values: Record<string, unknown> = {};
    for (const name of new Set(query.keys())) {
      const parameter = parameters.find((p) => p.name === name);
      if (!parameter) this.mismatch(`${where}: query parameter ${name} is not described`);
      else values[name] = parameter.schema?.type === 'array' ? query.getAll(name) : query.get(name);
    }
    const querySchema = {
      type: 'object',
      properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema ?? {}])),
      required: parameters.filter((p) => p.required).map((p) => p.name),
    };
    const checkQuery = this.validator(`${method} ${template} query`, querySchema, this.queryAjv);
    if (!checkQuery(values)) this.mismatch(`${where}: query ${describe(checkQuery.errors)}`);

    const schema = operation.requestBody?.content?.['application/json']?.schema;
    if (body === undefined) {
      if (operation.requestBody?.required) this.mismatch(`${where}: request body missing`);
    } else if (!schema) {
      if (!isObject(body) || Object.keys(body).length > 0)
        this.mismatch(`${where}: request body given, none described`);
    } else {
      const check = this.validator(`${method} ${template} request`, schema, this.ajv);
      if (!check(body)) this.mismatch(`${where}: request body ${describe(check.errors)}`);
    }
  }

  checkResponse(method: string, path: string, status: number, body: unknown): void {
    this.count += 1;
    const found = this.operation(method, path);
    if (!found) return;
    const problem = this.responseProblem(
      `${method} ${found.template}`,
      found.operation,
      status,
      body,
    );
    if (problem) this.mismatch(`${method.toUpperCase()} ${path} → ${status}: ${problem}`);
  }

  private responseProblem(
    operationKey: string,
    operation: OperationObject,
    status: number,
    body: unknown,
  ): string | undefined {
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find(
      (k) => operation.responses[k] !== undefined,
    );
    if (!key) return 'status not described';
    const schema = operation.responses[key]?.content?.['application/json']?.schema;
    if (!schema) return body === undefined ? undefined : 'body given, none described';
    if (body === undefined) return 'body missing';
    const check = this.validator(`${operationKey} ${key}`, schema, this.ajv);
    return check(body) ? undefined : `response body ${describe(check.errors)}`;
  }

  private mismatch(message: string): void {
    this.mismatches.push(message);
  }

  /** The described operation, or a mismatch naming the one that is not described. */
  private operation(method: string, path: string) {
    const relative = path.replace(/^\/v1(?=\/)/, '');
    const template = matchPathTemplate(this.document, relative);
    const operation = template
      ? (this.document.paths[template]?.[method.toLowerCase()] as OperationObject | undefined)
      : undefined;
    if (template && operation) return { template, operation };
    this.mismatch(`${method.toUpperCase()} ${path}: not an operation of the description`);
    return undefined;
  }

  private validator(key: string, schema: unknown, ajv: Ajv): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = ajv.compile(toJsonSchema(schema) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

/**
 * The checker for Hetzner's description at `HCLOUD_OPENAPI` (CI: `../shared/vendor/hetzner/
 * cloud.spec.json`); `{skipped}` says why when it cannot be read.
 */
export async function loadConformance(): Promise<Conformance | { skipped: string }> {
  const file = process.env.HCLOUD_OPENAPI;
  if (!file)
    return {
      skipped:
        'HCLOUD_OPENAPI is not set: point it at Hetzner cloud.spec.json (e.g. ../shared/vendor/hetzner/cloud.spec.json) to check exchanges against the description',
    };
  try {
    return new Conformance(await readDocument(file));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      skipped: `HCLOUD_OPENAPI=${file} could not be read as an OpenAPI document: ${reason}`,
    };
  }
}
