import type { AgentState } from '@svc/contract';
import { TRANSIENT_STATES } from '../api/queries/transient.js';

/** A machine's state, with its reason when it is in `error`. */
export function StatusBadge(props: { status: AgentState; reason?: string | null }) {
  const tone =
    props.status === 'running'
      ? 'ok'
      : props.status === 'error'
        ? 'bad'
        : TRANSIENT_STATES.has(props.status)
          ? 'busy'
          : 'idle';
  return (
    <span className={`badge badge-${tone}`} data-status={props.status}>
      {props.status}
      {props.status === 'error' && props.reason ? `: ${props.reason}` : ''}
    </span>
  );
}
