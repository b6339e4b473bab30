import type { Role } from '@svc/contract';
import type { Executor } from '../db/database.js';
import type { AccountRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import * as repo from './accounts.repo.js';

/** Who acts: a signed-in user, or the operator through the admin CLI (no membership checks). */
export type Actor = { readonly userId: string } | 'operator';

/** The roles that manage an account: its subscription, its members, what leaves it. */
export const MANAGERS: readonly Role[] = ['owner', 'admin'];

/**
 * The authorization every feature asks before it touches an account's data. Each check reads
 * through the caller's executor, so it belongs to the caller's transaction.
 */
export function createMembership() {
  /**
   * The caller's role in the account. Not a member (or no such account) is `not_found`, so other
   * accounts' ids reveal nothing; a member without one of `roles` is `forbidden`.
   */
  async function requireMember(
    executor: Executor,
    actor: Actor,
    accountId: string,
    roles?: readonly Role[],
  ): Promise<{ account: AccountRow; role: Role }> {
    const account = await repo.findAccountById(executor, accountId);
    if (!account) throw new AppError('not_found');
    if (actor === 'operator') return { account, role: 'owner' };
    const role = await repo.findRole(executor, accountId, actor.userId);
    if (!role) throw new AppError('not_found');
    if (roles && !roles.includes(role)) throw new AppError('forbidden');
    return { account, role };
  }

  return {
    requireMember,

    /** As `requireMember`, for an organization: a personal account is `not_found` here. */
    async requireOrganization(
      executor: Executor,
      actor: Actor,
      accountId: string,
      roles?: readonly Role[],
    ) {
      const found = await requireMember(executor, actor, accountId, roles);
      if (found.account.kind !== 'organization') throw new AppError('not_found');
      return found;
    },

    /**
     * `owner` or `admin` of the account (a plain member → `forbidden`). Besides billing and
     * members, they alone may take a machine out of the account (transfer, clone elsewhere):
     * members create and operate machines, but what leaves takes the account's data with it.
     */
    requireManager: (executor: Executor, actor: Actor, accountId: string) =>
      requireMember(executor, actor, accountId, MANAGERS),

    /**
     * The account a creation acts on: `accountId` when given (the caller must be a member), else
     * the caller's personal account.
     */
    async resolveTargetAccount(executor: Executor, userId: string, accountId?: string) {
      if (accountId) return (await requireMember(executor, { userId }, accountId)).account;
      const personal = await repo.findPersonalAccountId(executor, userId);
      if (!personal) throw new AppError('not_found', { message: 'user has no personal account' });
      return (await requireMember(executor, { userId }, personal)).account;
    },

    /**
     * An organization with active billing that the user belongs to, as a transfer target. Not a
     * member → 403 (docs/reference.md#lifecycle); personal account → 400
     * `target_not_organization`; inactive billing → 400 `target_billing_inactive`.
     */
    async requireTransferTarget(executor: Executor, userId: string, accountId: string) {
      const account = await repo.findAccountById(executor, accountId);
      if (!account) throw new AppError('not_found');
      if (!(await repo.findRole(executor, accountId, userId))) throw new AppError('forbidden');
      if (account.kind !== 'organization') throw new AppError('target_not_organization');
      if (!account.subscriptionActive) throw new AppError('target_billing_inactive');
      return account;
    },

    /** Ids of every account the user is a member of. */
    memberAccountIds: (executor: Executor, userId: string) => repo.listAccountIds(executor, userId),
  };
}

export type Membership = ReturnType<typeof createMembership>;
