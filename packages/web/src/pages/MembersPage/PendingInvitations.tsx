import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Mail } from 'lucide-react';
import { invitationsQuery, revokeInvitationMutation } from '../../api/queries/accounts.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { formatDate } from '../../modules/format.js';

/** Invitations not accepted yet; revoking one makes its link stop working. */
export function PendingInvitations(props: { orgId: string }) {
  const qc = useQueryClient();
  const invitations = useQuery(invitationsQuery(props.orgId));
  const revoke = useMutation(revokeInvitationMutation(qc, props.orgId));
  return (
    <section>
      <h2>Pending invitations</h2>
      <QueryView query={invitations} what="invitations">
        {(data) =>
          data.invitations.length === 0 ? (
            <Empty title="No pending invitations." icon={Mail}>
              Invite someone with the form above.
            </Empty>
          ) : (
            <TableScroll label="Pending invitations">
              <table>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Invited by</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.invitations.map((invitation) => (
                    <tr key={invitation.id}>
                      <td>{invitation.email}</td>
                      <td>{invitation.role}</td>
                      <td>{invitation.invitedBy?.name ?? 'a former member'}</td>
                      <td>{formatDate(invitation.expiresAt)}</td>
                      <td>
                        <ConfirmButton
                          label="Revoke"
                          accessibleLabel={`Revoke the invitation of ${invitation.email}`}
                          question={`Revoke the invitation of ${invitation.email}?`}
                          confirmLabel="Revoke"
                          pending={revoke.isPending}
                          onConfirm={() => revoke.mutate(invitation.id)}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </QueryView>
      <ErrorMessage error={revoke.error} />
    </section>
  );
}
