import { type Region, SIZE_ORDER, type Size } from '@svc/contract';
import { Field } from '../components/Field.js';
import { describeSize, REGION_NAMES } from './SizeSpecs.js';

/** The region picker of the create forms. */
export function RegionField(props: {
  value: Region;
  onChange: (region: Region) => void;
  errors: readonly string[];
}) {
  return (
    <Field label="Region" errors={props.errors}>
      {(control) => (
        <select
          {...control}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value as Region)}
        >
          {(Object.keys(REGION_NAMES) as Region[]).map((r) => (
            <option key={r} value={r}>
              {REGION_NAMES[r]}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A size picker (an Agent's size, a Plain VM's tier), each size with the region's specs. */
export function SizeField(props: {
  label: string;
  region: Region;
  value: Size;
  onChange: (size: Size) => void;
  errors: readonly string[];
  /** The sizes offered (a clone's start at its source's); every size by default. */
  sizes?: readonly Size[];
}) {
  return (
    <Field label={props.label} errors={props.errors}>
      {(control) => (
        <select
          {...control}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value as Size)}
        >
          {(props.sizes ?? SIZE_ORDER).map((s) => (
            <option key={s} value={s}>
              {describeSize(s, props.region)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
