import type { AppConnection, AppProviderEntry } from '@svc/contract';
import { useState } from 'react';
import { ConfirmButton } from '../../components/ConfirmButton.js';

/** A granted scope by its label when it is one of the optional ones, else as granted. */
const scopeName = (entry: AppProviderEntry, scope: string) =>
  entry.scopeLabels[scope] ?? entry.scopeLabels[scope.split('/').pop() ?? ''] ?? scope;

/**
 * One provider: what it covers, its optional scopes, and the account's connections to it. One the
 * operator has not configured says so and offers no Connect (the service would refuse it).
 */
export function ProviderCard(props: {
  entry: AppProviderEntry;
  connections: AppConnection[];
  onConnect: (scopes: string[]) => void;
  onDisconnect: (id: string) => void;
  disconnecting: boolean;
}) {
  const { entry } = props;
  const [scopes, setScopes] = useState<string[]>([]);
  const scopeEntries = Object.entries(entry.scopeLabels);
  const toggle = (scope: string, on: boolean) =>
    setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope));
  return (
    <article className="card provider" aria-labelledby={`provider-${entry.provider}`}>
      <h2 id={`provider-${entry.provider}`}>{entry.displayName}</h2>
      <p>{entry.description}</p>
      <p className="muted">
        Agents get <code>{entry.envVar}</code> for <code>{entry.tool.name}</code>; tokens{' '}
        {entry.tokenLifetime}.
      </p>
      {!entry.configured && (
        <p className="notice">
          Not configured on this service: its operator has not set up {entry.displayName} yet, so it
          cannot be connected.
        </p>
      )}
      {entry.configured && scopeEntries.length > 0 && (
        <fieldset className="choices">
          <legend>Optional access</legend>
          {scopeEntries.map(([scope, label]) => (
            <label key={scope}>
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => toggle(scope, e.target.checked)}
              />
              {label}
            </label>
          ))}
        </fieldset>
      )}
      {entry.configured && (
        <button type="button" className="primary" onClick={() => props.onConnect(scopes)}>
          Connect {entry.displayName}
        </button>
      )}
      {props.connections.length > 0 && (
        <ul className="connections">
          {props.connections.map((connection) => (
            <li key={connection.id} className="connection">
              <strong>{connection.providerAccountName}</strong>{' '}
              <span className={`badge badge-${connection.status === 'active' ? 'ok' : 'bad'}`}>
                {connection.status}
              </span>
              <div className="muted">
                {connection.scopes.map((scope) => scopeName(entry, scope)).join(', ') ||
                  'basic access'}
              </div>
              {connection.status === 'error' && entry.configured && (
                <button type="button" onClick={() => props.onConnect(scopes)}>
                  Reconnect
                </button>
              )}
              <ConfirmButton
                label="Disconnect"
                question={`Disconnect ${connection.providerAccountName}?`}
                confirmLabel="Disconnect"
                pending={props.disconnecting}
                onConfirm={() => props.onDisconnect(connection.id)}
              />
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
