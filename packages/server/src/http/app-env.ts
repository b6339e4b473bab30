import type { AccountMembership, PendingEmailChange, User } from '@svc/contract';

/** Typed request variables that middlewares publish for handlers. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the session middleware on endpoints whose auth is `session`. */
    user: User;
    /**
     * Set with `user`: the accounts the user belongs to (personal first), read by the same
     * statement that checked the session or token, so they are as current as the check.
     */
    memberships: AccountMembership[];
    /** Set with `user`: the user's requested new e-mail address, if one waits. */
    pendingEmailChange: PendingEmailChange | null;
    /**
     * Set with `user`: the session or personal access token the request was signed in by, by
     * its record's id (never its secret), for what must end when it does (a port's cookie).
     */
    signedInBy: SignedInBy;
    /** Set by the router before auth: the scope a personal access token needs here. */
    tokenScope: 'read' | 'write';
    /** Set by the Agent-token middleware on endpoints whose auth is `agent`. */
    agent: AgentPrincipal;
    /**
     * Set instead of `agent` on endpoints mounted with `agentToken: 'claim'`: the token's MAC
     * is verified, its generation and its Agent's state are NOT. The handler's own statement
     * must check them (`SILENT_AGENT_STATE`), so the request costs one round trip.
     */
    agentClaim: AgentClaim;
  };
}

/** A session (the settings page's id) or a personal access token (its id). */
export interface SignedInBy {
  readonly kind: 'session' | 'token';
  readonly id: string;
}

/** What a well-signed HMAC token names, before the database has confirmed it. */
export interface AgentClaim {
  readonly agentId: string;
  readonly gen: number;
}

/** Who an HMAC token speaks for: one Agent, on behalf of its account only. */
export interface AgentPrincipal {
  readonly agentId: string;
  readonly accountId: string;
}
