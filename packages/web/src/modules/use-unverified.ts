import { useQuery } from '@tanstack/react-query';
import { meQuery } from '../api/queries/accounts.js';

/**
 * Why a machine cannot be made yet: the service requires a verified e-mail address
 * (`EMAIL_VERIFICATION=required`) and the user's is not, so creating, cloning or adopting would
 * be refused with `email_unverified`. Nothing when it may be made.
 */
export function useUnverifiedReason(): string | undefined {
  const me = useQuery(meQuery());
  if (me.data?.emailVerification !== 'required' || me.data.user.emailVerified) return undefined;
  return `Verify your e-mail address first: open the link sent to ${me.data.user.email}.`;
}
