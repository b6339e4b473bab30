import { z } from 'zod';
import { Email, Password, Revoked, User } from './accounts.js';
import { defineEndpoint } from './endpoint.js';

/**
 * The secret of a link sent by e-mail (verification, password reset, invitation): what the
 * dashboard page it opens sends back. Only its hash is stored.
 */
export const LinkToken = z
  .string()
  .regex(/^[A-Za-z0-9_-]{20,100}$/, 'This link is not complete: open it from the e-mail again');

/** Whether an unverified user may create machines and publish (`EMAIL_VERIFICATION`). */
export const EmailVerificationMode = z.enum(['required', 'optional']);
export type EmailVerificationMode = z.infer<typeof EmailVerificationMode>;

export const verifyEmail = defineEndpoint({
  id: 'verifyEmail',
  method: 'POST',
  path: '/api/auth/verify-email',
  auth: 'none',
  tag: 'accounts',
  summary:
    "Verify an e-mail address with the token from its verification link (single use, 24 h); a link to a requested new address also makes it the account's address.",
  body: z.object({ token: LinkToken }),
  response: { status: 200, body: z.object({ email: z.string() }) },
  errors: ['invalid_link', 'email_taken'],
});

export const resendVerification = defineEndpoint({
  id: 'resendVerification',
  method: 'POST',
  path: '/api/auth/verify-email/resend',
  auth: 'session',
  tag: 'accounts',
  summary: "Send the signed-in user's verification link again (rate-limited).",
  response: { status: 202 },
  errors: ['rate_limited', 'invalid_state'],
});

export const requestPasswordReset = defineEndpoint({
  id: 'requestPasswordReset',
  method: 'POST',
  path: '/api/auth/password-reset',
  auth: 'none',
  tag: 'accounts',
  summary:
    'Send a password reset link (single use, 1 h) to the address if it has an account; the same answer either way.',
  body: z.object({ email: Email }),
  response: { status: 202 },
  errors: ['rate_limited'],
});

export const confirmPasswordReset = defineEndpoint({
  id: 'confirmPasswordReset',
  method: 'POST',
  path: '/api/auth/password-reset/confirm',
  auth: 'none',
  tag: 'accounts',
  summary:
    'Set a new password with the token from a reset link; every session and personal access token of the user ends (the answer counts them) and this browser is signed in.',
  body: z.object({ token: LinkToken, password: Password }),
  response: { status: 200, body: Revoked.extend({ user: User }) },
  errors: ['invalid_link', 'rate_limited'],
});

export const undoEmailChange = defineEndpoint({
  id: 'undoEmailChange',
  method: 'POST',
  path: '/api/auth/email-change/undo',
  auth: 'none',
  tag: 'accounts',
  summary:
    'Take the account back with the token from the link mailed to the previous address (single use, 7 days): a pending e-mail change is cancelled, one that took effect is reverted, the new password is set, every session and personal access token ends and this browser is signed in.',
  body: z.object({ token: LinkToken, password: Password }),
  response: { status: 200, body: Revoked.extend({ user: User }) },
  errors: ['invalid_link', 'email_taken', 'rate_limited'],
});

export const emailLinkEndpoints = [
  verifyEmail,
  resendVerification,
  requestPasswordReset,
  confirmPasswordReset,
  undoEmailChange,
] as const;
