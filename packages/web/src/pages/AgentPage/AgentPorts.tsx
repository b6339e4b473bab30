import {
  type Agent,
  type AgentPort,
  MAX_SHARED_PORTS,
  PORT_MAX,
  PORT_MIN,
  PortShare,
} from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  agentPortsQuery,
  shareAgentPortMutation,
  unshareAgentPortMutation,
} from '../../api/queries/agent-ports.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { QueryView } from '../../components/QueryView.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { TableScroll } from '../../components/TableScroll.js';

/** Share levels, as the selectors name them (the hint above the list says who each lets in). */
const SHARE_LABELS: Record<PortShare, string> = {
  private: 'Private',
  account: 'Account',
  public: 'Public',
};

/**
 * The Agent's ports: the ones shared and the ones its gateway sees listening, each with its URL
 * (`<port>--<subdomain>`), who may open it, and a way to share one that is not listening yet.
 */
export function AgentPorts({ agent }: { agent: Agent }) {
  const qc = useQueryClient();
  const ports = useQuery(agentPortsQuery(agent.id));
  const share = useMutation(shareAgentPortMutation(qc, agent.id));
  const unshare = useMutation(unshareAgentPortMutation(qc, agent.id));
  const pending = share.isPending || unshare.isPending;
  return (
    <>
      <p className="hint">
        A server you run inside the Agent (on a port from {PORT_MIN} to {PORT_MAX}) can be shared at
        its own address; at most {MAX_SHARED_PORTS} ports at a time. Private: the account's owners
        and admins may open it; Account: every member; Public: anyone with the address.
      </p>
      <QueryView query={ports} what="the Agent's ports">
        {(list) =>
          list.length === 0 ? (
            <p className="muted">
              {agent.status === 'running'
                ? 'Nothing is listening inside the Agent, and no port is shared.'
                : 'No port is shared. Ports listening inside show here while it runs.'}
            </p>
          ) : (
            <TableScroll label="Ports">
              <table aria-label="Ports">
                <thead>
                  <tr>
                    <th scope="col">Port</th>
                    <th scope="col">Listening</th>
                    <th scope="col">Shared with</th>
                    <th scope="col">Address</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((entry) => (
                    <PortRow
                      key={entry.port}
                      entry={entry}
                      pending={pending}
                      onShare={(level) => share.mutate({ port: entry.port, share: level })}
                      onUnshare={() => unshare.mutate(entry.port)}
                    />
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </QueryView>
      <ErrorMessage error={share.error ?? unshare.error} />
      <SharePortForm
        pending={share.isPending}
        onShare={(port, level) => share.mutate({ port, share: level })}
      />
    </>
  );
}

function PortRow(props: {
  entry: AgentPort;
  pending: boolean;
  onShare: (share: PortShare) => void;
  onUnshare: () => void;
}) {
  const { entry } = props;
  return (
    <tr>
      <td>{entry.port}</td>
      <td>{entry.listening ? 'yes' : 'no'}</td>
      <td>
        <select
          aria-label={`Who may open port ${entry.port}`}
          value={entry.share ?? ''}
          disabled={props.pending}
          onChange={(event) => props.onShare(event.target.value as PortShare)}
        >
          {entry.share === null && <option value="">Not shared</option>}
          {PortShare.options.map((level) => (
            <option key={level} value={level}>
              {SHARE_LABELS[level]}
            </option>
          ))}
        </select>
      </td>
      <td>
        {entry.share ? (
          <a href={entry.url} target="_blank" rel="noreferrer">
            <code>{entry.url}</code>
          </a>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td>
        {entry.share && (
          <button type="button" disabled={props.pending} onClick={props.onUnshare}>
            Unshare
          </button>
        )}
      </td>
    </tr>
  );
}

/** Shares a port by its number, listening or not yet. */
function SharePortForm(props: {
  pending: boolean;
  onShare: (port: number, share: PortShare) => void;
}) {
  const [port, setPort] = useState('');
  const [level, setLevel] = useState<PortShare>('private');
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        // Sent as typed: the service names what is wrong with it.
        props.onShare(Number(port.trim() || Number.NaN), level);
      }}
    >
      <Field label="Port" hint={`From ${PORT_MIN} to ${PORT_MAX}, e.g. 3000`}>
        {(control) => (
          <input
            {...control}
            inputMode="numeric"
            value={port}
            onChange={(event) => setPort(event.target.value)}
          />
        )}
      </Field>
      <Field label="Shared with">
        {(control) => (
          <select
            {...control}
            value={level}
            onChange={(event) => setLevel(event.target.value as PortShare)}
          >
            {PortShare.options.map((option) => (
              <option key={option} value={option}>
                {SHARE_LABELS[option]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <SubmitButton
        label="Share port"
        busyLabel="Sharing…"
        pending={props.pending}
        primary={false}
      />
    </form>
  );
}
