import { TypedConfirm } from '../components/TypedConfirm.js';

/**
 * The Destroy part of an Agent's or a Plain VM's page: a typed confirmation while the machine
 * may be destroyed (running, stopped or failed), otherwise a hint saying when it can be.
 */
export function DestroySection(props: {
  name: string;
  /** `Agent`, `Plain VM`. */
  noun: string;
  canDestroy: boolean;
  pending: boolean;
  hint: string;
  onConfirm: () => void;
}) {
  return (
    <>
      <h2>Destroy</h2>
      {props.canDestroy ? (
        <TypedConfirm
          name={props.name}
          action={`Destroy ${props.noun}`}
          pending={props.pending}
          onConfirm={props.onConfirm}
        />
      ) : (
        <p className="hint">{props.hint}</p>
      )}
    </>
  );
}
