import type { AppProvider } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import {
  authorizeUrl,
  connectionsKey,
  connectionsQuery,
  disconnectMutation,
  providersQuery,
} from '../../api/queries/app-connections.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { ProviderCard } from './ProviderCard.js';

/** What the callback page posts to this window (see the server's `callback-page.ts`). */
const CALLBACK_MESSAGE_TYPE = 'svc:app-connection';

export function AppsPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const providers = useQuery(providersQuery());
  const connections = useQuery(connectionsQuery(account.id));
  const disconnect = useMutation(disconnectMutation(qc, account.id));
  const [outcome, setOutcome] = useState<string | null>(null);
  useTitle('Apps', account.name);

  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== window.location.origin) return;
      const data = event.data as { type?: string; status?: string; provider?: string } | null;
      if (data?.type !== CALLBACK_MESSAGE_TYPE) return;
      const name =
        providers.data?.find((p) => p.provider === data.provider)?.displayName ?? data.provider;
      setOutcome(
        data.status === 'connected' ? `Connected ${name}.` : 'The connection failed. Try again.',
      );
      void qc.invalidateQueries({ queryKey: connectionsKey(account.id) });
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, [qc, account.id, providers.data]);

  const connect = (provider: AppProvider, scopes: string[]) => {
    setOutcome(null);
    window.open(
      authorizeUrl(provider, account.id, scopes),
      'svc-connect',
      'popup,width=520,height=680',
    );
  };

  return (
    <section>
      <h1>Apps</h1>
      <p className="hint">
        Connect third-party accounts; this account's Agents get their tokens through{' '}
        <code>svc</code>.
      </p>
      {outcome && <p role="status">{outcome}</p>}
      <ErrorMessage error={disconnect.error} />
      <QueryView query={providers} what="providers">
        {(entries) => (
          <QueryView query={connections} what="connections">
            {(list) => (
              <div className="cards providers">
                {entries.map((entry) => (
                  <ProviderCard
                    key={entry.provider}
                    entry={entry}
                    connections={list.filter((c) => c.provider === entry.provider)}
                    onConnect={(scopes) => connect(entry.provider, scopes)}
                    onDisconnect={(id) => disconnect.mutate(id)}
                    disconnecting={disconnect.isPending}
                  />
                ))}
              </div>
            )}
          </QueryView>
        )}
      </QueryView>
    </section>
  );
}
