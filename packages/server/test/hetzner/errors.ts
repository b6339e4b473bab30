/** One `details.fields` entry of Hetzner's `invalid_input` and `uniqueness_error` answers. */
export interface FieldError {
  readonly name: string;
  readonly messages: string[];
}

/**
 * An error the stand-in answers in Hetzner's envelope `{error: {code, message, details}}`.
 * Status and code come in the pairs of the description's error table.
 */
export class HetznerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toBody() {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export function notFound(what: string): HetznerError {
  return new HetznerError(404, 'not_found', `${what} not found`);
}

/** 422 with the field named in `details.fields`, as Hetzner reports bad input. */
export function invalidInput(field: string, problem: string): HetznerError {
  return new HetznerError(422, 'invalid_input', `invalid input in field '${field}': ${problem}`, {
    fields: [{ name: field, messages: [problem] } satisfies FieldError],
  });
}

export function uniquenessError(field: string): HetznerError {
  return new HetznerError(409, 'uniqueness_error', `${field} is already used`, {
    fields: [{ name: field, messages: ['is already used'] } satisfies FieldError],
  });
}

export function resourceLimitExceeded(limit: string): HetznerError {
  return new HetznerError(403, 'resource_limit_exceeded', 'project limit exceeded', {
    limits: [{ name: limit }],
  });
}

export function locked(): HetznerError {
  return new HetznerError(423, 'locked', 'server is locked: an action is already running');
}
