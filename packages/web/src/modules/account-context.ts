import type { AccountMembership, User } from '@svc/contract';
import { createContext, useContext } from 'react';

export interface CurrentAccount {
  readonly user: User;
  /** Every account the user belongs to (personal first). */
  readonly accounts: readonly AccountMembership[];
  /** The account the page acts on, from the URL. */
  readonly account: AccountMembership;
}

export const AccountContext = createContext<CurrentAccount | null>(null);

export function useCurrentAccount(): CurrentAccount {
  const current = useContext(AccountContext);
  if (!current) throw new Error('useCurrentAccount outside an account page');
  return current;
}

/** Paths inside one account's part of the dashboard. */
export const accountPath = (slug: string, ...rest: string[]) =>
  ['/accounts', slug, ...rest].join('/');

/** An account as pickers name it: the personal one says so. */
export const accountLabel = (account: AccountMembership) =>
  account.kind === 'personal' ? `${account.name} (personal)` : account.name;

export const canManage = (account: AccountMembership) =>
  account.role === 'owner' || account.role === 'admin';
