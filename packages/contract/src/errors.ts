import { z } from 'zod';

/**
 * Every error code the service answers with. The HTTP status of each code is decided once, in
 * `errorStatus` below; clients branch on the code, never on a message.
 */
export const ErrorCode = z.enum([
  // Everywhere
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'invalid_state',
  'payload_too_large',
  'headers_too_large',
  'request_timeout',
  'rate_limited',
  'internal_error',
  'unavailable',
  // Sign-in and accounts
  'invalid_credentials',
  'email_taken',
  'slug_taken',
  'already_member',
  'last_owner',
  'email_unverified',
  'insufficient_scope',
  'invalid_link',
  // Agents and Plain VMs
  'legacy_cohort',
  'size_downgrade',
  'disk_shrink',
  'snapshot_limit',
  'target_not_organization',
  'target_billing_inactive',
  'subscription_required',
  'not_transferable',
  // Billing
  'invoices_overdue',
  'billing_unavailable',
  'invalid_signature',
  // Vault
  'invalid_public_key',
  'duplicate_key',
  // App connections
  'scope_not_allowed',
  'provider_not_configured',
  'connection_error',
  'refresh_unavailable',
  // Bundles
  'bundle_name_taken',
  'upload_invalid',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ValidationIssue = z.object({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string(),
});
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/**
 * The envelope of every JSON error response: the service's, the Agent gateway's and the operator
 * socket's. `detail` says why in a sentence, on statuses below 500 only (a fault's detail goes
 * to the log); clients branch on `error`, never on `detail`.
 */
export const ErrorEnvelope = z.object({
  error: ErrorCode,
  detail: z
    .string()
    .optional()
    .meta({ description: 'Why, in a sentence; only on statuses below 500' }),
  issues: z.array(ValidationIssue).optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/**
 * An envelope for `code`: `detail` is kept only where the code's status is below 500 (the expose
 * rule), and empty parts are left out.
 */
export function errorEnvelope(
  code: ErrorCode,
  extra: {
    readonly detail?: string | undefined;
    readonly issues?: readonly ValidationIssue[];
  } = {},
): ErrorEnvelope {
  return {
    error: code,
    ...(extra.detail && errorStatus[code] < 500 && { detail: extra.detail }),
    ...(extra.issues && extra.issues.length > 0 && { issues: [...extra.issues] }),
  };
}

/** The HTTP status of each code: the one table the server answers from and the OpenAPI lists. */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  invalid_state: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
  invalid_credentials: 401,
  email_taken: 409,
  slug_taken: 409,
  already_member: 409,
  last_owner: 409,
  email_unverified: 403,
  insufficient_scope: 403,
  invalid_link: 400,
  legacy_cohort: 400,
  size_downgrade: 400,
  disk_shrink: 400,
  snapshot_limit: 409,
  target_not_organization: 400,
  target_billing_inactive: 400,
  subscription_required: 400,
  not_transferable: 400,
  invoices_overdue: 409,
  billing_unavailable: 503,
  invalid_signature: 400,
  invalid_public_key: 400,
  duplicate_key: 409,
  scope_not_allowed: 400,
  provider_not_configured: 503,
  connection_error: 410,
  refresh_unavailable: 503,
  bundle_name_taken: 409,
  upload_invalid: 400,
} as const satisfies Record<ErrorCode, number>;
