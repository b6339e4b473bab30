import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Package } from 'lucide-react';
import { Link } from 'react-router';
import {
  bundlesQuery,
  deleteBundleMutation,
  deleteVersionMutation,
} from '../../api/queries/bundles.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, canManage, useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { BundleCard } from './BundleCard.js';

/** The account's published bundles: versions, public links, and deletion for owners and admins. */
export function BundlesPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const bundles = useQuery(bundlesQuery(account.id));
  const removeBundle = useMutation(deleteBundleMutation(qc, account.id, account.slug));
  const removeVersion = useMutation(deleteVersionMutation(qc, account.id, account.slug));
  useTitle('Bundles', account.name);
  return (
    <section>
      <h1>Bundles</h1>
      <p className="hint">
        An Agent publishes its home as a bundle with <code>svc glamp stage</code> and{' '}
        <code>svc glamp confirm</code>. Every publish is a new version; each has a public page.
      </p>
      <ErrorMessage error={removeBundle.error ?? removeVersion.error} />
      <QueryView query={bundles} what="bundles">
        {(list) =>
          list.length === 0 ? (
            <Empty
              title="No published bundles yet."
              icon={Package}
              action={
                <Link className="button" to={accountPath(account.slug, 'agents')}>
                  Go to your Agents
                </Link>
              }
            >
              Run <code>svc glamp stage</code> on one of your Agents to publish its home.
            </Empty>
          ) : (
            list.map((bundle) => (
              <BundleCard
                key={bundle.id}
                bundle={bundle}
                canDelete={canManage(account)}
                pending={removeBundle.isPending || removeVersion.isPending}
                // Each action clears the other's old error: what shows is about the last one.
                onDeleteVersion={(version) => {
                  removeBundle.reset();
                  removeVersion.mutate({ name: bundle.name, version });
                }}
                onDeleteBundle={() => {
                  removeVersion.reset();
                  removeBundle.mutate(bundle.name);
                }}
              />
            ))
          )
        }
      </QueryView>
    </section>
  );
}
