import { isTransient, type MachineState, statusReasonSentence } from '@svc/contract';

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

/**
 * What the reason of a machine in `error` means, as a sentence (`image_unavailable`: what the
 * operator runs), under the machine's heading; nothing for a reason without one.
 */
export function StatusReason(props: { status: MachineState; reason?: string | null }) {
  const sentence = props.status === 'error' ? statusReasonSentence(props.reason) : undefined;
  return sentence ? <p className="notice">{sentence}</p> : null;
}
