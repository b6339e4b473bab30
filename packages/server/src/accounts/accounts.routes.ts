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
  const { accounts, sessions } = ctx;
  const secure = ctx.config.http.secureCookies;

  router.mount(api.signUp, async ({ body }, c) => {
    const address = clientAddress(c, ctx.config.http);
    const { user, account, session } = await accounts.signUp({
      ...body,
      clientAddress: address,
      userAgent: c.req.header('user-agent'),
    });
    writeSessionCookie(c, session, secure);
    return { user, account };
  });

  router.mount(api.signIn, async ({ body }, c) => {
    const address = clientAddress(c, ctx.config.http);
    const { user, session } = await sessions.signIn({
      ...body,
      clientAddress: address,
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

  router.mount(api.getMe, async (_, c) => accounts.getMe(c.var.user));

  router.mount(api.updateMe, async ({ body }, c) => accounts.setName(c.var.user.id, body.name));

  router.mount(api.changePassword, async ({ body }, c) => {
    await sessions.changePassword({
      ...body,
      user: c.var.user,
      // The session middleware let this request in: its cookie is there.
      currentSessionId: readSessionCookie(c, secure) as string,
      clientAddress: clientAddress(c, ctx.config.http),
    });
    return undefined;
  });

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

  router.mount(api.addMember, async ({ params, body }, c) =>
    accounts.addMember({ userId: c.var.user.id }, { accountId: params.id, ...body }),
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
    accounts.setSubscription({ userId: c.var.user.id }, params.id, true),
  );

  router.mount(api.deactivateSubscription, async ({ params }, c) =>
    accounts.setSubscription({ userId: c.var.user.id }, params.id, false),
  );
}
