/** Which requests a fault applies to; `path` is tested against the path after `/v1`. */
export interface RequestMatch {
  readonly method?: string;
  readonly path?: RegExp;
}

export interface FaultAnswer {
  readonly status: number;
  readonly code: string;
  readonly message?: string;
}

export interface ActionError {
  readonly code: string;
  readonly message: string;
}

/** Fault injection for tests. Each fault stays until used up or `clear()`. */
export interface Faults {
  /**
   * The next `times` matching requests get this error, or lose their connection before they are
   * handled (`'drop'`) or after (`'lose-answer'`: the work is done, the caller never hears so).
   */
  failNext(match: RequestMatch, answer: FaultAnswer | 'drop' | 'lose-answer', times?: number): void;
  /** Every matching request (all when no match is given) waits `ms` before it is handled. */
  delay(ms: number, match?: RequestMatch): void;
  /** The next `times` actions with this command (any when omitted) end in `error`. */
  failActions(match: { command?: string }, error: ActionError, times?: number): void;
  /** Creating this server type in this location answers 412 `resource_unavailable`. */
  unavailable(serverType: string, location: string): void;
  clear(): void;
}

function matches(match: RequestMatch, method: string, path: string): boolean {
  if (match.method && match.method.toUpperCase() !== method) return false;
  return !match.path || match.path.test(path);
}

export class FaultSet implements Faults {
  private failures: {
    match: RequestMatch;
    answer: FaultAnswer | 'drop' | 'lose-answer';
    left: number;
  }[] = [];
  private delays: { match: RequestMatch; ms: number }[] = [];
  private actionFailures: { command?: string; error: ActionError; left: number }[] = [];
  private soldOut = new Set<string>();

  failNext(match: RequestMatch, answer: FaultAnswer | 'drop' | 'lose-answer', times = 1): void {
    this.failures.push({ match, answer, left: times });
  }

  delay(ms: number, match: RequestMatch = {}): void {
    this.delays.push({ match, ms });
  }

  failActions(match: { command?: string }, error: ActionError, times = 1): void {
    this.actionFailures.push({ command: match.command, error, left: times });
  }

  unavailable(serverType: string, location: string): void {
    this.soldOut.add(`${serverType}@${location}`);
  }

  clear(): void {
    this.failures = [];
    this.delays = [];
    this.actionFailures = [];
    this.soldOut.clear();
  }

  /** Consumes one use of the first failure that matches this request. */
  takeFailure(method: string, path: string): FaultAnswer | 'drop' | 'lose-answer' | undefined {
    const failure = this.failures.find((f) => f.left > 0 && matches(f.match, method, path));
    if (!failure) return undefined;
    failure.left -= 1;
    return failure.answer;
  }

  delayMs(method: string, path: string): number {
    return this.delays
      .filter((d) => matches(d.match, method, path))
      .reduce((sum, d) => sum + d.ms, 0);
  }

  /** Consumes one use of the first action failure for this command. */
  takeActionFailure(command: string): ActionError | undefined {
    const failure = this.actionFailures.find(
      (f) => f.left > 0 && (f.command === undefined || f.command === command),
    );
    if (!failure) return undefined;
    failure.left -= 1;
    return failure.error;
  }

  isUnavailable(serverType: string, location: string): boolean {
    return this.soldOut.has(`${serverType}@${location}`);
  }
}
