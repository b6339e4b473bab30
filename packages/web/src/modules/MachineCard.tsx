import type { MachineState } from '@svc/contract';
import { Link } from 'react-router';
import { StatusBadge, StatusDot } from './StatusBadge.js';

/** One machine in a list: its state as a dot by the name, in words below, and its facts. */
export function MachineCard(props: {
  name: string;
  to: string;
  status: MachineState;
  reason?: string | null;
  facts: readonly string[];
}) {
  return (
    <li className="card machine-card">
      <h2 className="machine-name">
        <StatusDot status={props.status} />
        <Link to={props.to}>{props.name}</Link>
      </h2>
      <StatusBadge status={props.status} reason={props.reason} />
      {props.facts.map((fact) => (
        <span key={fact} className="muted">
          {fact}
        </span>
      ))}
    </li>
  );
}
