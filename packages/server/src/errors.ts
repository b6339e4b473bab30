import {
  type ErrorCode,
  type ErrorEnvelope,
  errorEnvelope,
  errorStatus,
  type ValidationIssue,
} from '@svc/contract';

/**
 * A failure the caller can act on, named by a contract error code. Services throw it; only the
 * HTTP layer turns it into a status and the envelope. A `message` given here is public on
 * statuses below 500 (the envelope's `detail`, as node-oidc-provider's `expose` rule): write it
 * for the caller, and never put a secret or another account's data in it. On 5xx it is for the
 * log only.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly issues?: ValidationIssue[];
  /** The message, when the thrower wrote one (else `message` is just the code). */
  readonly detail?: string;
  /** Extra response headers, e.g. `Retry-After` for `rate_limited`. */
  readonly headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    options: {
      message?: string;
      issues?: ValidationIssue[];
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(options.message ?? code, { cause: options.cause });
    if (options.message) this.detail = options.message;
    if (options.issues) this.issues = options.issues;
    if (options.headers) this.headers = options.headers;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export function toErrorEnvelope(error: AppError): ErrorEnvelope {
  return errorEnvelope(error.code, {
    detail: error.detail,
    ...(error.issues && { issues: error.issues }),
  });
}
