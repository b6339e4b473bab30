import { isTransient, type MachineState, statusReasonSentence } from '@svc/contract';

type Tone = 'ok' | 'busy' | 'bad' | 'idle';

/** The colour a state is drawn in: running is well, error is not, a change is under way. */
function toneOf(status: MachineState): Tone {
  if (status === 'running') return 'ok';
  if (status === 'error') return 'bad';
  return isTransient(status) ? 'busy' : 'idle';
}

/** A machine's state, with its reason (an `error`'s, or a stopped machine's failed restore). */
export function StatusBadge(props: { status: MachineState; reason?: string | null }) {
  const tone = toneOf(props.status);
  return (
    <span className={`badge badge-${tone}`} data-status={props.status}>
      {props.status}
      {props.reason ? `: ${props.reason}` : ''}
    </span>
  );
}

/** The state as a dot, for lists read at a glance; the badge beside it says it in words. */
export function StatusDot(props: { status: MachineState }) {
  return (
    <span
      className={`status-dot dot-${toneOf(props.status)}`}
      data-status={props.status}
      aria-hidden="true"
    />
  );
}

/**
 * What the machine's reason means, as a sentence (`image_unavailable`: what the operator runs;
 * `restore_failed`: what to do next), under the machine's heading; nothing for a reason without one.
 */
export function StatusReason(props: { reason?: string | null }) {
  const sentence = statusReasonSentence(props.reason);
  return sentence ? <p className="notice">{sentence}</p> : null;
}
