import { Role } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  changeRoleMutation,
  membersQuery,
  removeMemberMutation,
} from '../../api/queries/accounts.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { InviteForm } from './InviteForm.js';
import { PendingInvitations } from './PendingInvitations.js';

export function MembersPage() {
  const { account, user } = useCurrentAccount();
  useTitle('Members', account.name);
  const qc = useQueryClient();
  const members = useQuery({
    ...membersQuery(account.id),
    enabled: account.kind === 'organization',
  });
  const remove = useMutation(removeMemberMutation(qc, account.id));
  const changeRole = useMutation(changeRoleMutation(qc, account.id));
  if (account.kind !== 'organization')
    return (
      <p>A personal account has one member: you. Create an organization to work with others.</p>
    );
  const manager = canManage(account);
  // Only owners grant `owner`.
  const roles = Role.options.filter((r) => r !== 'owner' || account.role === 'owner');

  return (
    <section>
      <h1>Members of {account.name}</h1>
      <QueryView query={members} what="members">
        {(data) => (
          <TableScroll label="Members">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.members.map((member) => (
                  <tr key={member.userId}>
                    <td>{member.name}</td>
                    <td>{member.email}</td>
                    <td>
                      {/* Owners change any role; admins those of members and admins. */}
                      {manager && (account.role === 'owner' || member.role !== 'owner') ? (
                        <select
                          aria-label={`Role of ${member.name}`}
                          value={member.role}
                          disabled={changeRole.isPending}
                          onChange={(e) =>
                            changeRole.mutate({
                              userId: member.userId,
                              role: e.target.value as Role,
                            })
                          }
                        >
                          {roles.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      ) : (
                        member.role
                      )}
                    </td>
                    <td>
                      {(manager || member.userId === user.id) && (
                        <ConfirmButton
                          label={member.userId === user.id ? 'Leave' : `Remove ${member.name}`}
                          question={`Remove ${member.email}?`}
                          confirmLabel="Remove"
                          pending={remove.isPending}
                          onConfirm={() => remove.mutate(member.userId)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </QueryView>
      <ErrorMessage error={remove.error} />
      <ErrorMessage error={changeRole.error} />
      {manager && <InviteForm orgId={account.id} roles={roles} />}
      {manager && <PendingInvitations orgId={account.id} />}
    </section>
  );
}
