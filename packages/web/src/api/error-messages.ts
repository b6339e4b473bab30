import type { ValidationIssue } from '@svc/contract';
import type { ClientErrorCode } from './client.js';

/** One readable sentence per error code; the code itself stays available on the error. */
const SENTENCES: Record<ClientErrorCode, string> = {
  invalid_request: 'Some fields need attention: see the messages next to them.',
  unauthorized: 'Your session has ended. Sign in again.',
  forbidden: 'You may not do this in this account.',
  not_found: 'This does not exist, or it is not in an account you belong to.',
  invalid_state: 'This is not possible in its current state.',
  payload_too_large: 'The request is too large.',
  headers_too_large: 'The request is too large.',
  request_timeout: 'The request took too long to arrive. Try again.',
  rate_limited: 'Too many attempts. Wait a while and try again.',
  internal_error: 'The service failed. Try again in a moment.',
  unavailable: 'The service is briefly unavailable. Try again in a few seconds.',
  invalid_credentials: 'The e-mail or the password is wrong.',
  email_taken: 'An account with this e-mail already exists.',
  slug_taken: 'This slug is taken.',
  already_member: 'This person is already a member.',
  last_owner: 'An organization keeps at least one owner.',
  email_unverified: 'Verify your e-mail address first.',
  insufficient_scope: 'This token may only read.',
  invalid_link: 'This link no longer works.',
  legacy_cohort: 'Legacy Agents cannot do this.',
  size_downgrade: 'A clone cannot be smaller than its source.',
  disk_shrink: 'A disk cannot shrink: choose a size with at least as large a disk.',
  snapshot_limit: 'This machine has as many snapshots as it may keep: delete one first.',
  target_not_organization: 'Transfers go to organizations only.',
  target_billing_inactive: 'The organization has no active subscription.',
  subscription_required: 'Subscription billing needs an active subscription on the account.',
  not_transferable: 'This cannot be transferred in its current state.',
  invoices_overdue: 'Pay the overdue invoices first.',
  billing_unavailable: 'The payment processor cannot be reached just now. Try again in a moment.',
  invalid_signature: 'The request’s signature does not check out.',
  invalid_public_key: 'This is not an OpenSSH public key line (a private key is never accepted).',
  duplicate_key: 'This key is already in the Vault.',
  bundle_name_taken: 'A bundle of this account already has this name.',
  upload_invalid: 'An upload did not arrive whole; publish again.',
  scope_not_allowed: 'That scope is not offered.',
  provider_not_configured: 'This provider is not configured on the service.',
  connection_error: 'The connection needs to be reconnected.',
  refresh_unavailable: 'The provider is unreachable right now.',
  network_error: 'The service cannot be reached. Check your connection.',
  invalid_response: 'The service answered something unexpected.',
};

export function errorSentence(
  code: ClientErrorCode,
  issues: readonly ValidationIssue[],
  detail?: string,
): string {
  // Issues about a field are shown next to it; one about the request as a whole is said here.
  const general = issues.find((issue) => issue.path.length <= 1);
  if (code === 'invalid_request' && general) return general.message;
  // The service's own reason, when it gave one, follows the sentence for the code.
  if (!detail) return SENTENCES[code];
  return `${SENTENCES[code]} ${detail.charAt(0).toUpperCase()}${detail.slice(1)}${/[.!?]$/.test(detail) ? '' : '.'}`;
}
