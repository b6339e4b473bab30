import {
  type ErrorCode,
  type ErrorEnvelope,
  errorStatus,
  type ValidationIssue,
} from '@svc/contract';

/**
 * A failure the caller can act on, named by a contract error code. Services throw it; only the
 * HTTP layer turns it into a status and the envelope. `message` is for logs and never sent.
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly issues?: ValidationIssue[];
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
    if (options.issues) this.issues = options.issues;
    if (options.headers) this.headers = options.headers;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export function toErrorEnvelope(error: AppError): ErrorEnvelope {
  return error.issues ? { error: error.code, issues: error.issues } : { error: error.code };
}
