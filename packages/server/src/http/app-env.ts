import type { AccountMembership, User } from '@svc/contract';

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
    /** Set by the router before auth: the scope a personal access token needs here. */
    tokenScope: 'read' | 'write';
    /** Set by the Agent-token middleware on endpoints whose auth is `agent`. */
    agent: AgentPrincipal;
  };
}

/** Who an HMAC token speaks for: one Agent, on behalf of its account only. */
export interface AgentPrincipal {
  readonly agentId: string;
  readonly accountId: string;
}
