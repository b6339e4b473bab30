import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import { clientAddress } from '../http/client-address.js';
import type { Router } from '../http/router.js';
import {
  clearSessionCookie,
  readSessionCookie,
  writeSessionCookie,
} from '../http/session-cookie.js';

export function mountAccountsRoutes(router: Router, ctx: AppContext) {
  const { accounts, sessions, emailLinks, invitations, apiTokens } = ctx;
  const address = (c: Parameters<typeof clientAddress>[0]) => clientAddress(c, ctx.config.http);
  const secure = ctx.config.http.secureCookies;

  router.mount(api.signUp, async ({ body }, c) => {
    const { user, account, session } = await accounts.signUp({
      ...body,
      clientAddress: address(c),
      userAgent: c.req.header('user-agent'),
    });
    writeSessionCookie(c, session, secure);
    return { user, account };
  });

  router.mount(api.signIn, async ({ body }, c) => {
    const { user, session } = await sessions.signIn({
      ...body,
      clientAddress: address(c),
      userAgent: c.req.header('user-agent'),
    });
    writeSessionCookie(c, session, secure);
    return { user };
  });

  router.mount(api.signOut, async (_, c) => {
    const sessionId = readSessionCookie(c, secure);
    if (sessionId) await sessions.signOut(sessionId);
    clearSessionCookie(c, secure);
    return undefined;
  });

  router.mount(api.getMe, async (_, c) =>
    accounts.getMe(c.var.user, c.var.memberships, c.var.pendingEmailChange),
  );

  router.mount(api.updateMe, async ({ body }, c) =>
    accounts.updateMe(c.var.user, body, address(c)),
  );

  router.mount(api.deleteMe, async (_, c) => {
    await accounts.deleteMe(c.var.user);
    clearSessionCookie(c, secure);
    return undefined;
  });

  router.mount(api.verifyEmail, async ({ body }) => emailLinks.verifyEmail(body.token));

  router.mount(api.resendVerification, async (_, c) => {
    await emailLinks.resendVerification(c.var.user, address(c));
    return undefined;
  });

  router.mount(api.requestPasswordReset, async ({ body }, c) => {
    await emailLinks.requestPasswordReset(body.email, address(c));
    return undefined;
  });

  // Both take the account back with a link: every session and token ends, this browser is in.
  for (const [endpoint, takeBack] of [
    [api.confirmPasswordReset, emailLinks.confirmPasswordReset],
    [api.undoEmailChange, emailLinks.undoEmailChange],
  ] as const) {
    router.mount(endpoint, async ({ body }, c) => {
      const { session, ...answer } = await takeBack({
        ...body,
        clientAddress: address(c),
        userAgent: c.req.header('user-agent'),
      });
      writeSessionCookie(c, session, secure);
      return answer;
    });
  }

  router.mount(api.createApiToken, async ({ body }, c) => apiTokens.create(c.var.user, body));

  router.mount(api.listApiTokens, async (_, c) => ({ tokens: await apiTokens.list(c.var.user) }));

  router.mount(api.revokeApiToken, async ({ params }, c) => {
    await apiTokens.revoke(c.var.user, params.id);
    return undefined;
  });

  router.mount(api.createInvitation, async ({ params, body }, c) =>
    invitations.invite(c.var.user, { accountId: params.id, ...body, clientAddress: address(c) }),
  );

  router.mount(api.listInvitations, async ({ params }, c) => ({
    invitations: await invitations.list(c.var.user, params.id),
  }));

  router.mount(api.revokeInvitation, async ({ params }, c) => {
    await invitations.revoke(c.var.user, params.id, params.invitationId);
    return undefined;
  });

  router.mount(api.acceptInvitation, async ({ body }, c) =>
    invitations.accept(c.var.user, body.token),
  );

  router.mount(api.changePassword, async ({ body }, c) =>
    sessions.changePassword({
      ...body,
      user: c.var.user,
      // The session middleware let this request in: its cookie is there.
      currentSessionId: readSessionCookie(c, secure) as string,
      clientAddress: address(c),
    }),
  );

  router.mount(api.listSessions, async (_, c) => ({
    sessions: await sessions.list(c.var.user.id, readSessionCookie(c, secure)),
  }));

  router.mount(api.endSession, async ({ params }, c) => {
    await sessions.end(c.var.user.id, params.id);
    return undefined;
  });

  router.mount(api.createOrg, async ({ body }, c) => {
    const user = c.var.user;
    return accounts.createOrg({ ...body, ownerUserId: user.id });
  });

  router.mount(api.listMembers, async ({ params }, c) => ({
    members: await accounts.listMembers({ userId: c.var.user.id }, params.id),
  }));

  // Adding by e-mail is an invitation: nobody joins without opening the link mailed to them.
  router.mount(api.addMember, async ({ params, body }, c) =>
    invitations.invite(c.var.user, { accountId: params.id, ...body, clientAddress: address(c) }),
  );

  router.mount(api.changeMemberRole, async ({ params, body }, c) =>
    accounts.changeMemberRole(
      { userId: c.var.user.id },
      { accountId: params.id, userId: params.userId, role: body.role },
    ),
  );

  router.mount(api.removeMember, async ({ params }, c) => {
    await accounts.removeMember(
      { userId: c.var.user.id },
      { accountId: params.id, userId: params.userId },
    );
    return undefined;
  });

  router.mount(api.activateSubscription, async ({ params }, c) =>
    ctx.subscriptions.activate({ userId: c.var.user.id }, params.id),
  );

  router.mount(api.deactivateSubscription, async ({ params }, c) =>
    ctx.subscriptions.deactivate({ userId: c.var.user.id }, params.id),
  );
}
