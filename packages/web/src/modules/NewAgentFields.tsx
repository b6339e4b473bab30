import {
  type AccountMembership,
  type BillingType,
  type Region,
  type Size,
  subdomainStem,
} from '@svc/contract';
import { issuesAt } from '../api/client.js';
import { Field } from '../components/Field.js';
import { BillingTypePicker } from './BillingTypePicker.js';
import { IdleStopField, idleStopMinutesOf } from './IdleStopField.js';
import { RegionField, SizeField } from './RegionSizeFields.js';

/** What every new Agent is given, however it starts (empty, or adopted from a bundle). */
export interface NewAgent {
  readonly name: string;
  readonly region: Region;
  readonly size: Size;
  readonly billingType: BillingType;
  /** As typed; empty: the service's default (`AGENT_IDLE_STOP_MINUTES`). */
  readonly idleStopMinutes: string;
}

export const NEW_AGENT: NewAgent = {
  name: '',
  region: 'eu',
  size: 'small',
  billingType: 'metered',
  idleStopMinutes: '',
};

/** The create call's fields for `value`: an empty idle stop is left out (the default). */
export function newAgentBody(value: NewAgent) {
  const { idleStopMinutes, ...fields } = value;
  const minutes = idleStopMinutesOf(idleStopMinutes);
  return { ...fields, ...(minutes !== undefined && { idleStopMinutes: minutes }) };
}

/** The new Agent's name (with the subdomain it makes), region, size, billing and idle stop. */
export function NewAgentFields(props: {
  value: NewAgent;
  onChange: (value: NewAgent) => void;
  /** The account it is made in: subscription billing needs that account's subscription. */
  account: AccountMembership;
  /** The create call's error, whose issues show next to their fields. */
  error: unknown;
}) {
  const { value, error } = props;
  const set =
    <K extends keyof NewAgent>(key: K) =>
    (to: NewAgent[K]) =>
      props.onChange({ ...value, [key]: to });
  const stem = subdomainStem(value.name);
  return (
    <>
      <Field
        label="Name"
        hint={
          stem ? (
            <>
              Subdomain: <code>{stem}-xxxxxx</code> (six random characters are added)
            </>
          ) : (
            'The subdomain is made from the name.'
          )
        }
        errors={issuesAt(error, 'name')}
      >
        {(control) => (
          <input {...control} value={value.name} onChange={(e) => set('name')(e.target.value)} />
        )}
      </Field>
      <RegionField
        value={value.region}
        onChange={set('region')}
        errors={issuesAt(error, 'region')}
      />
      <SizeField
        label="Size"
        region={value.region}
        value={value.size}
        onChange={set('size')}
        errors={issuesAt(error, 'size')}
      />
      <BillingTypePicker
        account={props.account}
        product="agent"
        size={value.size}
        region={value.region}
        value={value.billingType}
        onChange={set('billingType')}
      />
      <IdleStopField
        value={value.idleStopMinutes}
        onChange={set('idleStopMinutes')}
        errors={issuesAt(error, 'idleStopMinutes')}
        placeholder="the service's default"
      />
    </>
  );
}
