import type Provider from 'oidc-provider';

/** Koa's context, as oidc-provider's `use` hands it over. */
type KoaContextWithOIDC = Parameters<Parameters<Provider['use']>[0]>[0];

import type { StandIn } from './stand-in-provider.js';

async function readBody(ctx: KoaContextWithOIDC): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The provider APIs oidc-provider has no equivalent of: GitHub's `/user`, `/user/emails` and
 * token deletion, and Spotify's `/v1/me`, all backed by the stand-in's own access tokens.
 */
export function mountStandInApi(standIn: StandIn) {
  const { provider } = standIn;
  const accountOf = async (ctx: KoaContextWithOIDC) => {
    const match = /^Bearer (\S+)$/.exec(ctx.get('authorization'));
    const token = match?.[1] ? await provider.AccessToken.find(match[1]) : undefined;
    return token && !token.isExpired ? token.accountId : undefined;
  };
  provider.use(async (ctx, next) => {
    if (standIn.kind === 'code' && ctx.method === 'GET' && /^\/user(\/emails)?$/.test(ctx.path)) {
      const sub = await accountOf(ctx);
      if (!sub) {
        ctx.status = 401;
        ctx.body = { message: 'Bad credentials' };
        return;
      }
      ctx.body =
        ctx.path === '/user'
          ? { id: 4242, login: sub, email: null }
          : [
              { email: `${sub}@secondary.test`, primary: false, verified: true },
              { email: `${sub}@example.test`, primary: true, verified: true },
            ];
      return;
    }
    if (standIn.kind === 'music' && ctx.method === 'GET' && ctx.path === '/v1/me') {
      const sub = await accountOf(ctx);
      if (!sub) {
        ctx.status = 401;
        return;
      }
      ctx.body = { id: sub, display_name: `DJ ${sub}`, email: `${sub}@example.test` };
      return;
    }
    const revoke = /^\/applications\/([^/]+)\/token$/.exec(ctx.path);
    if (standIn.kind === 'code' && ctx.method === 'DELETE' && revoke) {
      standIn.counts.revocation += 1;
      const expected = Buffer.from(`${standIn.clientId}:${standIn.clientSecret}`).toString(
        'base64',
      );
      if (revoke[1] !== standIn.clientId || ctx.get('authorization') !== `Basic ${expected}`) {
        ctx.status = 401;
        return;
      }
      const { access_token: value } = JSON.parse(await readBody(ctx)) as { access_token: string };
      const token = await provider.AccessToken.find(value);
      if (!token) {
        ctx.status = 404;
        return;
      }
      await token.destroy();
      ctx.status = 204;
      return;
    }
    await next();
  });
}
