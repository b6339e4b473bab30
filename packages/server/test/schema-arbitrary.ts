import fc from 'fast-check';

/** The JSON Schema subset the contract's OpenAPI document uses (zod's `toJSONSchema` output). */
export interface JsonSchema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
}

export interface SchemaArbitraryOptions {
  /** Turns the arbitrary of a string position into the one to use (e.g. adding bad text). */
  readonly text: (valid: fc.Arbitrary<string>) => fc.Arbitrary<string>;
  /** Values to prefer for `format: uuid` strings (ids of things that exist). */
  readonly ids: readonly string[];
  /**
   * Also values outside the schema, now and then: numbers past their bounds or not integers,
   * text outside an enum or a pattern. For query parameters, which a URL carries as any text.
   */
  readonly outside?: boolean;
}

/** Text a query parameter may carry that its schema does not describe. */
const outsideText = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('-1', '0', '1.5', '1e999', '-0', 'NaN', 'Infinity', '9007199254740993', ''),
  fc.double().map(String),
  fc.bigInt().map(String),
);

/** `valid`, or now and then a value the schema does not describe, when `outside` is asked. */
const orOutside = <T>(
  valid: fc.Arbitrary<T>,
  options: SchemaArbitraryOptions,
  outside: fc.Arbitrary<string> = outsideText,
): fc.Arbitrary<T | string> =>
  options.outside
    ? fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: outside, weight: 1 })
    : valid;

/** Arrays stay short: the point is reaching every position, not volume. */
const MAX_ITEMS = 3;

function stringArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions) {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  let valid: fc.Arbitrary<string>;
  if (schema.format === 'uuid' && options.ids.length > 0)
    valid = fc.oneof(fc.constantFrom(...options.ids), fc.uuid());
  else if (schema.pattern)
    valid = fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= min && s.length <= max);
  // Long enough to pass a minimum, short enough to stay readable in a failure report.
  else valid = fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, 40)) });
  const bounded = schema.pattern || schema.format || min > 0 || max < Number.POSITIVE_INFINITY;
  if (!bounded) return options.text(valid);
  // One character too many is the length check's own edge.
  const tooLong = max < 10_000 ? [fc.string({ minLength: max + 1, maxLength: max + 1 })] : [];
  return options.text(orOutside(valid, options, fc.oneof(outsideText, ...tooLong)));
}

function integerArbitrary(schema: JsonSchema) {
  const low =
    schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? -1e9);
  return fc.integer({ min: Math.max(low, -1e9), max: Math.min(schema.maximum ?? 1e9, 1e9) });
}

/** An arbitrary of values the schema describes, mostly valid, strings shaped by `options.text`. */
export function schemaArbitrary(
  schema: JsonSchema,
  options: SchemaArbitraryOptions,
): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return options.text(fc.constant(String(schema.const)));
  if (schema.enum)
    return options.text(orOutside(fc.constantFrom(...schema.enum.map(String)), options));
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => schemaArbitrary(s, options)));
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema, options);
    case 'integer':
      return orOutside(integerArbitrary(schema), options);
    case 'number':
      return orOutside(fc.double({ noNaN: true, noDefaultInfinity: true }), options);
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(schemaArbitrary(schema.items ?? {}, options), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(
          schema.minItems ?? 0,
          Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS),
        ),
      });
    case 'object': {
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, s]) => [k, schemaArbitrary(s, options)]),
      );
      const known = fc.record(properties, { requiredKeys: schema.required ?? [] });
      if (typeof schema.additionalProperties !== 'object') return known;
      const extra = fc.dictionary(
        options.text(fc.string({ minLength: 1, maxLength: 12 })),
        schemaArbitrary(schema.additionalProperties, options),
        { maxKeys: MAX_ITEMS },
      );
      return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...k }));
    }
    default:
      // A refinement or transform zod cannot describe (`{}`): anything JSON.
      return fc.oneof(options.text(fc.string()), fc.integer(), fc.boolean());
  }
}
