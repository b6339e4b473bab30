import { useMutation, useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { deleteMeMutation, meQuery } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { TypedConfirm } from '../../components/TypedConfirm.js';

/**
 * Deleting the user and their personal account. The service refuses while something would be
 * left behind (an organization without an owner, machines, connections, bundles) and says what.
 */
export function DeleteAccountSection() {
  const navigate = useNavigate();
  const me = useQuery(meQuery());
  const remove = useMutation({
    ...deleteMeMutation(),
    onSuccess: () => navigate('/sign-in', { state: { notice: 'Your account was deleted.' } }),
  });
  if (!me.data) return null;
  return (
    <section>
      <h2>Delete account</h2>
      <p>
        This deletes you and your personal account for good. First make another member an owner of
        each organization you own alone, and destroy, disconnect or delete your personal account's
        machines, app connections and bundles.
      </p>
      <TypedConfirm
        name={me.data.user.email}
        action="Delete account"
        pending={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      <ErrorMessage error={remove.error} />
    </section>
  );
}
