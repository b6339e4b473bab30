import type { Agent } from '@svc/contract';

/** The facts' row saying which published version the home was adopted from, with its page. */
export function AdoptedFromFact({ from }: { from: NonNullable<Agent['adoptedFrom']> }) {
  return (
    <>
      <dt>Adopted from</dt>
      <dd>
        {/* The public page of that very version, outside the dashboard. */}
        <a href={`/${from.bundle}/versions/${from.version}`}>{from.bundle}</a> version{' '}
        {from.version}
      </dd>
    </>
  );
}

/** Credentials the bundle names that were not given at adoption: the Agent still lacks them. */
export function CredentialsToSet({ keys }: { keys: readonly string[] }) {
  if (keys.length === 0) return null;
  return (
    <section className="notice" aria-labelledby="credentials-to-set">
      <h2 id="credentials-to-set">Credentials to set</h2>
      <ul>
        {keys.map((key) => (
          <li key={key}>
            <code>{key}</code> to set
          </li>
        ))}
      </ul>
      <p className="hint">
        Put them in <code>~/.openclaw/.env</code> on the Agent, one <code>KEY=value</code> a line.
      </p>
    </section>
  );
}
