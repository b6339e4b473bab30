import type { Usage } from '@svc/contract';
import { Clock } from 'lucide-react';
import { Empty } from '../../components/Empty.js';
import { TableScroll } from '../../components/TableScroll.js';
import { formatHours } from '../../modules/format.js';

const NOUN = { agent: 'Agent', plain_vm: 'Plain VM' } as const;

/** This month's hours per machine; destroyed or moved machines keep their line, unnamed. */
export function UsageTable({ usage }: { usage: Usage }) {
  const since = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeZone: 'UTC' }).format(
    new Date(usage.periodStart),
  );
  if (usage.resources.length === 0)
    return <Empty title={`No machines ran on this account since ${since}.`} icon={Clock} />;
  return (
    <TableScroll label="Usage">
      <table aria-label="Usage">
        <caption className="hint">Hours since {since} (UTC), up to now.</caption>
        <thead>
          <tr>
            <th scope="col">Machine</th>
            <th scope="col">Size</th>
            <th scope="col">Region</th>
            <th scope="col">Metered hours</th>
            <th scope="col">Subscription hours</th>
          </tr>
        </thead>
        <tbody>
          {usage.resources.map((line) => (
            <tr key={line.resourceId}>
              <th scope="row">
                {line.name ?? <span className="muted">destroyed or moved</span>}{' '}
                <span className="muted">{NOUN[line.resourceKind]}</span>
              </th>
              <td>{line.size}</td>
              <td>{line.region}</td>
              <td>{formatHours(line.meteredSeconds)}</td>
              <td>{formatHours(line.subscriptionSeconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
