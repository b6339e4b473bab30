import { isTransient, type MachineState } from '@svc/contract';

/** A machine's state, with its reason when it is in `error`. */
export function StatusBadge(props: { status: MachineState; reason?: string | null }) {
  const tone =
    props.status === 'running'
      ? 'ok'
      : props.status === 'error'
        ? 'bad'
        : isTransient(props.status)
          ? 'busy'
          : 'idle';
  return (
    <span className={`badge badge-${tone}`} data-status={props.status}>
      {props.status}
      {props.status === 'error' && props.reason ? `: ${props.reason}` : ''}
    </span>
  );
}
