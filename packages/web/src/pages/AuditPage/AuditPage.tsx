import type { AuditEvent } from '@svc/contract';
import { useInfiniteQuery } from '@tanstack/react-query';
import { ScrollText } from 'lucide-react';
import { useState } from 'react';
import { auditQuery } from '../../api/queries/accounts.js';
import { Empty } from '../../components/Empty.js';
import { Field } from '../../components/Field.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { formatDate } from '../../modules/format.js';
import { useTitle } from '../../modules/use-title.js';

/** The kinds the log can be narrowed to (`GET /api/accounts/{id}/audit?kind=`). */
const KINDS: readonly [string, string][] = [
  ['', 'Everything'],
  ['agent', 'Agents'],
  ['plain_vm', 'Plain VMs'],
  ['member', 'Members and roles'],
  ['account', 'Subscription'],
  ['bundle', 'Bundles'],
];

/** What an event's data says, as `key: value` pairs. */
const details = (data: AuditEvent['data']) =>
  Object.entries(data)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

/** Who did what in the account, newest first (owners and admins). */
export function AuditPage() {
  const { account } = useCurrentAccount();
  useTitle('Audit log', account.name);
  const [kind, setKind] = useState('');
  const log = useInfiniteQuery({
    ...auditQuery(account.id, kind || undefined),
    enabled: canManage(account),
  });
  if (!canManage(account)) return <p>Only owners and admins see the audit log.</p>;

  return (
    <section>
      <h1>Audit log</h1>
      <Field label="Show">
        {(control) => (
          <select {...control} value={kind} onChange={(e) => setKind(e.target.value)}>
            {KINDS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <QueryView query={log} what="the audit log">
        {(data) => {
          const events = data.pages.flatMap((page) => page.items);
          if (events.length === 0)
            return (
              <Empty title="Nothing recorded yet." icon={ScrollText}>
                Machines created, members invited and bundles published show up here.
              </Empty>
            );
          return (
            <>
              <TableScroll label="Audit events">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                      <th scope="col">Details</th>
                    </tr>
                  </thead>
                  <tbody>
                    {events.map((event) => (
                      <tr key={event.id}>
                        <td>{formatDate(event.createdAt)}</td>
                        <td>{event.actor?.email ?? 'the service'}</td>
                        <td>
                          <code>{event.action}</code>
                        </td>
                        <td>{details(event.data)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
              {log.hasNextPage && (
                <button
                  type="button"
                  onClick={() => log.fetchNextPage()}
                  disabled={log.isFetchingNextPage}
                >
                  {log.isFetchingNextPage ? 'Loading…' : 'Older events'}
                </button>
              )}
            </>
          );
        }}
      </QueryView>
    </section>
  );
}
