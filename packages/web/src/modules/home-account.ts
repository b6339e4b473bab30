import type { AccountMembership } from '@svc/contract';

const KEY = 'svc.account';

/** Remembers the account last opened, so pages outside any account keep showing its sections. */
export function rememberAccount(slug: string): void {
  try {
    window.localStorage.setItem(KEY, slug);
  } catch {
    // Storage can be off (a private window's policy); the personal account is then the default.
  }
}

/**
 * The account whose sections a page outside any account (Settings, New organization, Adopt)
 * shows: the one last opened while the user still belongs to it, else the personal one.
 */
export function homeAccount(accounts: readonly AccountMembership[]): AccountMembership | undefined {
  let remembered: string | null = null;
  try {
    remembered = window.localStorage.getItem(KEY);
  } catch {
    remembered = null;
  }
  return (
    accounts.find((a) => a.slug === remembered) ??
    accounts.find((a) => a.kind === 'personal') ??
    accounts[0]
  );
}
