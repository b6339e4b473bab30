import type { AccountMembership, User } from '@svc/contract';
import { useMutation } from '@tanstack/react-query';
import { LogOut, Plus, Settings } from 'lucide-react';
import { Link, useNavigate } from 'react-router';
import { signOutMutation } from '../api/queries/accounts.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { Logo } from '../components/Logo.js';
import { accountLabel, accountPath } from './account-context.js';

/**
 * The header of every signed-in page: the mark, the account switcher (the account shown is
 * `current`; switching keeps the section), a new organization, the user's settings, sign out.
 */
export function TopBar(props: {
  user: User;
  accounts: readonly AccountMembership[];
  current: AccountMembership | undefined;
  section: string;
}) {
  const navigate = useNavigate();
  const signOut = useMutation({ ...signOutMutation(), onSuccess: () => navigate('/sign-in') });
  const switchTo = (next: string) =>
    navigate(accountPath(next, props.section === 'members' ? 'agents' : props.section));
  return (
    <>
      <header className="topbar">
        <Link to="/" className="brand">
          <Logo />
          <span className="phone-hidden">svc</span>
        </Link>
        <label className="switcher">
          <span className="visually-hidden">Account</span>
          <select value={props.current?.slug ?? ''} onChange={(e) => switchTo(e.target.value)}>
            {props.accounts.map((a) => (
              <option key={a.id} value={a.slug}>
                {accountLabel(a)}
              </option>
            ))}
          </select>
        </label>
        <div className="topbar-links">
          <Link to="/new-organization">
            <Plus className="icon" />
            New organization
          </Link>
          <Link to="/settings" className="user" title="Settings">
            <Settings className="icon" />
            <span>{props.user.email}</span>
          </Link>
        </div>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          <LogOut className="icon" />
          <span className="phone-hidden">Sign out</span>
        </button>
      </header>
      <ErrorMessage error={signOut.error} />
    </>
  );
}
