import type { BundleCredential } from '@svc/contract';
import { issuesAt } from '../../api/client.js';
import { Field } from '../../components/Field.js';

/**
 * One optional field per credential the bundle names. A value goes to the new Agent's
 * `~/.openclaw/.env`; an empty one is left for later (the Agent's page lists it as to set).
 */
export function CredentialFields(props: {
  credentials: readonly BundleCredential[];
  values: Readonly<Record<string, string>>;
  onChange: (key: string, value: string) => void;
  error: unknown;
}) {
  if (props.credentials.length === 0) return null;
  return (
    <fieldset className="credentials">
      <legend>Credentials</legend>
      <p className="hint">
        Written to <code>~/.openclaw/.env</code> on the new Agent. Leave one empty to set it there
        later.
      </p>
      {props.credentials.map((credential) => (
        <Field
          key={credential.key}
          label={credential.key}
          hint={hintOf(credential)}
          errors={issuesAt(props.error, 'source', 'credentials', credential.key)}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={props.values[credential.key] ?? ''}
              onChange={(e) => props.onChange(credential.key, e.target.value)}
            />
          )}
        </Field>
      ))}
    </fieldset>
  );
}

/** The author's description and where the bundle uses the value (`path:line`). */
function hintOf(credential: BundleCredential) {
  const where = credential.locations.length ? `Used in ${credential.locations.join(', ')}` : '';
  return [credential.description, where].filter(Boolean).join(' · ') || undefined;
}
