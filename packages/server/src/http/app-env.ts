import type { User } from '@svc/contract';

/** Typed request variables that middlewares publish for handlers. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the session middleware on endpoints whose auth is `session`. */
    user: User;
  };
}
