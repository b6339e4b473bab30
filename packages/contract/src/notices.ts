import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

/**
 * What the service mails an account's owners and admins about, each with a link to act:
 * - `connection_error`: an app connection went to `error` (its refresh token is dead);
 * - `machine_error`: an Agent or a Plain VM went to `error` (with the reason);
 * - `agent_idle_stopped`: an Agent was stopped for idleness (at most one a day per Agent);
 * - `subscription_past_due`: the account's subscription went past due;
 * - `backup_failed`: a machine's daily backup failed on every try of its day (at most one a day
 *   per machine).
 */
export const NOTICE_KINDS = [
  'connection_error',
  'machine_error',
  'agent_idle_stopped',
  'subscription_past_due',
  'backup_failed',
] as const;
export const NoticeKind = z.enum(NOTICE_KINDS);
export type NoticeKind = z.infer<typeof NoticeKind>;

/** Which notices the user gets: every kind is on until they turn it off. */
export const NoticePreferences = z.object(
  Object.fromEntries(NOTICE_KINDS.map((kind) => [kind, z.boolean()])) as Record<
    NoticeKind,
    z.ZodBoolean
  >,
);
export type NoticePreferences = z.infer<typeof NoticePreferences>;

export const getNoticePreferences = defineEndpoint({
  id: 'getNoticePreferences',
  method: 'GET',
  path: '/api/me/notices',
  auth: 'session',
  tag: 'accounts',
  summary:
    'Which notices the signed-in user is mailed (for the accounts where they are an owner or admin): each kind on or off.',
  response: { status: 200, body: NoticePreferences },
  errors: [],
});

export const updateNoticePreferences = defineEndpoint({
  id: 'updateNoticePreferences',
  method: 'PATCH',
  path: '/api/me/notices',
  auth: 'session',
  tag: 'accounts',
  summary:
    'Turn kinds of notices on or off for the signed-in user; kinds left out stay as they are. Answers every kind.',
  body: NoticePreferences.partial(),
  response: { status: 200, body: NoticePreferences },
  errors: [],
});

export const noticeEndpoints = [getNoticePreferences, updateNoticePreferences] as const;
