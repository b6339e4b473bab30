import { IDLE_STOP_MAX_MINUTES } from '@svc/contract';
import { Field } from '../components/Field.js';

/**
 * An Agent's `idleStopMinutes` as typed: whole minutes, `0` = never. The text is kept as typed
 * (a number input gives `''` for nothing or nonsense) and read with `idleStopMinutesOf`.
 */
export function IdleStopField(props: {
  value: string;
  onChange: (value: string) => void;
  errors: readonly string[];
  /** Said when the field is empty (the create forms leave the choice to the service). */
  placeholder?: string;
}) {
  return (
    <Field
      label="Idle stop (minutes)"
      hint="Stopped after this many minutes without anyone using it (its URL, terminal or editor); 0 = never."
      errors={props.errors}
    >
      {(control) => (
        <input
          {...control}
          type="number"
          inputMode="numeric"
          min={0}
          max={IDLE_STOP_MAX_MINUTES}
          step={1}
          placeholder={props.placeholder}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/** The minutes typed, or `undefined` when the field is empty (the server checks the rest). */
export const idleStopMinutesOf = (text: string): number | undefined =>
  text.trim() === '' ? undefined : Number(text);
