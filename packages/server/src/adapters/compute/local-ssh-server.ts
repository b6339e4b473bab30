import { timingSafeEqual } from 'node:crypto';
import type { FirewallRule } from '@svc/contract';
import ssh2, { type AuthContext, type AuthenticationType, type Connection } from 'ssh2';
import { verify as verifyCrypt } from 'unixcrypt';
import type { Logger } from '../../logger.js';
import { AttemptLimiter, type BackoffPolicy } from '../../util/attempt-backoff.js';
import { allows } from './firewall-match.js';
import { serveSession } from './local-ssh-session.js';

/** Who may log in to a local Plain VM, read afresh for every connection. */
export interface SshAccess {
  readonly user: string;
  /** `type base64` lines: exactly the Vault keys chosen at creation. */
  readonly authorizedKeys: readonly string[];
  /** SHA-512 crypt hash of the one-time password, when password login is enabled. */
  readonly passwordHash?: string;
  readonly home: string;
  /** The VM's name, shown in the prompt of an interactive shell. */
  readonly hostname?: string;
  /** The VM's firewall as last applied. */
  readonly rules: readonly FirewallRule[];
}

export interface SshServerOptions {
  /** The VM's host key (OpenSSH or PEM private key). */
  readonly hostKey: string;
  readonly port?: number;
  readonly access: () => Promise<SshAccess> | SshAccess;
  readonly log: Logger;
  /** Milliseconds since the epoch; tests move it to pass the failed-login delays. */
  readonly now?: () => number;
}

/**
 * Failed logins per source address: five pass, then each must wait twice as long as the one
 * before (1 s, 2 s, … up to 10 minutes) while every login from there, right or wrong, is refused.
 * Other addresses are not affected, so a guessing client cannot lock the owner out.
 */
export const SSH_LOGIN_BACKOFF: BackoffPolicy = {
  free: 5,
  baseDelayMs: 1000,
  maxDelayMs: 10 * 60_000,
  forgetMs: 60 * 60_000,
};

// ssh2 is CommonJS: Node's ESM loader sees only its default export.
const { Server, utils } = ssh2;

/**
 * A local Plain VM's SSH endpoint on loopback: the firewall decides who may connect at all (tcp
 * port 22 rules, checked against the peer address on every connection, so changes apply at
 * once), then the default user logs in with a chosen Vault key or the one-time password, and
 * commands and interactive shells (with a terminal when asked for) run in the VM's home
 * (`local-ssh-session.ts`).
 */
export async function startSshServer(
  options: SshServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const failures = new AttemptLimiter(SSH_LOGIN_BACKOFF, options.now);
  const server = new Server({ hostKeys: [options.hostKey] }, (client, info) => {
    void serve(client, info.ip, options, failures).catch((err) => {
      options.log.warn({ err }, 'ssh connection failed');
      client.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function serve(
  client: Connection,
  peer: string,
  options: SshServerOptions,
  failures: AttemptLimiter,
) {
  client.on('error', () => {});
  const access = await options.access();
  if (!allows(access.rules, 'tcp', 22, peer)) {
    options.log.info({ peer }, 'ssh connection refused by the firewall');
    client.end();
    return;
  }
  const refuseWhileWaiting = () => {
    const wait = failures.waitMs(peer);
    if (wait > 0) options.log.info({ peer, waitMs: wait }, 'ssh login refused: too many failures');
    return wait > 0;
  };
  if (refuseWhileWaiting()) {
    client.end();
    return;
  }
  client.on('authentication', (ctx) => {
    if (refuseWhileWaiting()) {
      ctx.reject([]);
      client.end();
      return;
    }
    // `none` is how every client starts, and a key without a signature only asks whether it
    // would do: neither is a guess.
    const isGuess = ctx.method !== 'none' && !(ctx.method === 'publickey' && !ctx.signature);
    if (authenticate(ctx, access)) return;
    if (isGuess) failures.count(peer);
  });
  client.on('ready', () => {
    client.on('session', (acceptSession) => serveSession(acceptSession(), access));
  });
}

/** Accepts or rejects one authentication request; true when accepted. */
function authenticate(ctx: AuthContext, access: SshAccess): boolean {
  if (ctx.username === access.user && isAllowed(ctx, access)) {
    ctx.accept();
    return true;
  }
  ctx.reject(methods(access));
  return false;
}

function isAllowed(ctx: AuthContext, access: SshAccess): boolean {
  if (ctx.method === 'publickey') {
    for (const line of access.authorizedKeys) {
      const key = utils.parseKey(line);
      if (key instanceof Error) continue;
      const allowed = key.getPublicSSH();
      if (ctx.key.algo !== key.type || !sameBytes(ctx.key.data, allowed)) continue;
      // Without a signature the client only asks whether this key would do.
      if (!ctx.signature || key.verify(ctx.blob as Buffer, ctx.signature, ctx.hashAlgo) === true) {
        return true;
      }
    }
    return false;
  }
  return Boolean(
    ctx.method === 'password' &&
      access.passwordHash &&
      verifyCrypt(ctx.password, access.passwordHash),
  );
}

const methods = (access: SshAccess): AuthenticationType[] =>
  access.passwordHash ? ['publickey', 'password'] : ['publickey'];

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);
