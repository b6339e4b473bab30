import { createHash } from 'node:crypto';
import type { BackoffPolicy } from '../util/attempt-backoff.js';
import type { RateCounter } from './rate-limits.repo.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Sign-in attempts slow down per (account, client address) and per client address, never per
 * account alone: a storm of wrong passwords from elsewhere cannot lock the owner out. Past the
 * free attempts each one waits twice as long as the one before (1 s, 2 s, … 15 minutes at most);
 * a successful sign-in ends its (account, address) streak and gives its address attempt back.
 */
export const SIGN_IN_LIMITS = {
  perAccountAddress: { free: 5, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, forgetMs: HOUR },
  perAddress: { free: 20, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, forgetMs: HOUR },
} as const satisfies Record<string, BackoffPolicy>;

/** Sign-ups per client address, successful or not: ten, then 1 minute doubling to an hour. */
export const SIGN_UP_LIMITS = {
  perAddress: { free: 10, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 24 * HOUR },
} as const satisfies Record<string, BackoffPolicy>;

/**
 * Mail the service sends on request (password resets, verification links, invitations), per
 * address it goes to from one client address, per address it goes to, per account that asks and
 * per client address: a few free, then a minute doubling to an hour, so nobody's inbox can be
 * flooded through the service. The recipient's own counter is the most generous, so that a
 * stranger's requests from one place cannot hold up the owner's reset from another.
 */
export const MAIL_LIMITS = {
  perRecipientAddress: { free: 3, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 6 * HOUR },
  perRecipient: { free: 10, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 6 * HOUR },
  perAccount: { free: 5, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 6 * HOUR },
  perAddress: { free: 20, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 6 * HOUR },
  /** Invitations an organization sends. */
  perOrganization: { free: 50, baseDelayMs: MINUTE, maxDelayMs: HOUR, forgetMs: 24 * HOUR },
} as const satisfies Record<string, BackoffPolicy>;

/** Password reset confirmations per client address: each costs a password hash. */
export const RESET_CONFIRM_LIMITS = {
  perAddress: { free: 20, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, forgetMs: HOUR },
} as const satisfies Record<string, BackoffPolicy>;

/** Every counter here is forgotten after this long without an attempt. */
export const LONGEST_FORGET_MS = Math.max(
  ...[
    ...Object.values(SIGN_IN_LIMITS),
    ...Object.values(SIGN_UP_LIMITS),
    ...Object.values(MAIL_LIMITS),
    ...Object.values(RESET_CONFIRM_LIMITS),
  ].map((p) => p.forgetMs),
);

// Keys are hashed so the table holds neither e-mail nor IP addresses.
const key = (kind: string, ...parts: string[]) =>
  `${kind}:${createHash('sha256').update(parts.join('\n')).digest('hex')}`;

/** The counters a sign-in is charged to; `email` as the contract normalized it. */
export const signInCounters = (email: string, address: string) =>
  ({
    accountAddress: {
      key: key('sign-in:account-address', email, address),
      policy: SIGN_IN_LIMITS.perAccountAddress,
    },
    address: { key: key('sign-in:address', address), policy: SIGN_IN_LIMITS.perAddress },
  }) satisfies Record<string, RateCounter>;

export const resetConfirmCounter = (address: string): RateCounter => ({
  key: key('reset-confirm:address', address),
  policy: RESET_CONFIRM_LIMITS.perAddress,
});

export const signUpCounter = (address: string): RateCounter => ({
  key: key('sign-up:address', address),
  policy: SIGN_UP_LIMITS.perAddress,
});

/**
 * The counters one requested message is charged to: its recipient, from this client address and
 * at all (`purpose` apart, so resets do not use up verifications), the account asking (if signed
 * in), the organization inviting, and the client address.
 */
export const mailCounters = (
  purpose: 'reset' | 'verify' | 'invite',
  to: { email: string; userId?: string; organizationId?: string; clientAddress: string },
): RateCounter[] => [
  {
    key: key(`mail-${purpose}:recipient-address`, to.email, to.clientAddress),
    policy: MAIL_LIMITS.perRecipientAddress,
  },
  { key: key(`mail-${purpose}:recipient`, to.email), policy: MAIL_LIMITS.perRecipient },
  { key: key('mail:address', to.clientAddress), policy: MAIL_LIMITS.perAddress },
  ...(to.userId
    ? [{ key: key(`mail-${purpose}:account`, to.userId), policy: MAIL_LIMITS.perAccount }]
    : []),
  ...(to.organizationId
    ? [{ key: key('mail-invite:org', to.organizationId), policy: MAIL_LIMITS.perOrganization }]
    : []),
];
