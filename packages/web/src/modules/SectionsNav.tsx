import type { AccountMembership } from '@svc/contract';
import {
  Bot,
  Compass,
  CreditCard,
  KeyRound,
  type LucideIcon,
  Package,
  Plug,
  ScrollText,
  Server,
  Users,
} from 'lucide-react';
import { useEffect, useRef } from 'react';
import { NavLink, useLocation } from 'react-router';
import { accountPath, canManage } from './account-context.js';

const SECTIONS: readonly (readonly [string, string, LucideIcon])[] = [
  ['agents', 'Agents', Bot],
  ['plain-vms', 'Plain VMs', Server],
  ['vault', 'Vault', KeyRound],
  ['apps', 'Apps', Plug],
  ['bundles', 'Bundles', Package],
  ['explore', 'Explore', Compass],
  ['billing', 'Billing', CreditCard],
  ['members', 'Members', Users],
  ['audit', 'Audit log', ScrollText],
];

/**
 * An account's sections as a tab bar. On a phone it is one line that scrolls sideways, so the
 * selected section is scrolled into view whenever the page changes.
 */
export function SectionsNav(props: { account: AccountMembership }) {
  const { account } = props;
  const bar = useRef<HTMLElement>(null);
  const { pathname } = useLocation();
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each new path
  useEffect(() => {
    const nav = bar.current;
    const active = nav?.querySelector<HTMLElement>('a.active');
    if (!nav || !active) return;
    // Scrolls the bar only (scrollIntoView would move the page too).
    const left = active.offsetLeft - (nav.clientWidth - active.offsetWidth) / 2;
    nav.scrollTo({ left: Math.max(0, left) });
  }, [pathname, account.slug]);
  const shown = SECTIONS.filter(
    ([key]) =>
      (key !== 'members' || account.kind === 'organization') &&
      (key !== 'audit' || canManage(account)),
  );
  return (
    <nav ref={bar} className="sections" aria-label="Sections">
      {shown.map(([key, label, Icon]) => (
        <NavLink key={key} to={accountPath(account.slug, key)}>
          <Icon className="icon" />
          {label}
        </NavLink>
      ))}
    </nav>
  );
}
