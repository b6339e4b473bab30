import { useQuery } from '@tanstack/react-query';
import { Navigate, useParams, useSearchParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import { meQuery } from '../../api/queries/accounts.js';
import { bundleQuery } from '../../api/queries/bundles.js';
import { QueryView } from '../../components/QueryView.js';
import { signInPath } from '../../modules/return-to.js';
import { useTitle } from '../../modules/use-title.js';
import { AdoptForm } from './AdoptForm.js';

/**
 * `/dashboard/adopt/{accountSlug}/{name}[?version=N]`: a new Agent from a published bundle, as
 * the public page's "Adopt this bundle" links here. It belongs to no account yet, so it stands
 * outside any account's pages (inside the signed-in frame); signed out, it goes to sign-in
 * and comes back.
 */
export function AdoptPage() {
  const { accountSlug = '', name = '' } = useParams();
  const [searchParams] = useSearchParams();
  const me = useQuery(meQuery());
  const bundle = useQuery(bundleQuery(accountSlug, name));
  useTitle(`Adopt ${name}`);
  if (me.error instanceof ApiError && me.error.status === 401)
    return <Navigate to={signInPath()} replace />;
  if (bundle.error instanceof ApiError && bundle.error.status === 404)
    return (
      <div className="narrow">
        <h1>Bundle not found</h1>
        <p>It was deleted, or it has no published version.</p>
        <a href="/explore">Explore bundles</a>
      </div>
    );
  const requested = Number(searchParams.get('version'));
  return (
    <div className="narrow">
      <QueryView query={me} what="your accounts">
        {({ accounts }) => (
          <QueryView query={bundle} what="the bundle">
            {(detail) => (
              <AdoptForm
                bundle={detail}
                accounts={accounts}
                {...(Number.isInteger(requested) && requested > 0 && { requested })}
              />
            )}
          </QueryView>
        )}
      </QueryView>
    </div>
  );
}
