import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConnectionToken } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import type { ConnectionTokens } from './app-connections/connection-tokens.js';
import type { AppConnectionRow } from './db/schema.js';
import type { EdgeProxy } from './edge/edge-proxy.js';
import { AppError } from './errors.js';
import { countedEdge, countedMailer, countedTokens, measuredJobs } from './instrumentation.js';
import type { JobDefinition, JobRun } from './jobs/job.js';

// The wrappers the composition root puts around parts to count them: each passes the part's
// answer or error through unchanged and counts it once, under its outcome.

const expiresAt = new Date('2026-01-01T12:00:00Z');
const row = { provider: 'suite', accessTokenExpiresAt: expiresAt } as AppConnectionRow;
const tokenExpiring = (at: Date) => ({ expiresAt: at.toISOString() }) as ConnectionToken;

function tokensAnswering(answer: () => Promise<ConnectionToken>) {
  const seen: string[] = [];
  const tokens = countedTokens({ tokenFor: answer } as ConnectionTokens, {
    tokenRequest: (provider, outcome) => seen.push(`${provider} ${outcome}`),
  });
  return { tokens, seen };
}

describe('countedTokens', () => {
  it('counts the stored token as fresh and a new expiry as refreshed', async () => {
    const fresh = tokensAnswering(async () => tokenExpiring(expiresAt));
    await fresh.tokens.tokenFor(row);
    const later = new Date(expiresAt.getTime() + 3600_000);
    const refreshed = tokensAnswering(async () => tokenExpiring(later));
    expect(await refreshed.tokens.tokenFor(row)).toEqual(tokenExpiring(later));
    expect([...fresh.seen, ...refreshed.seen]).toEqual(['suite fresh', 'suite refreshed']);
  });

  it('counts 503 and 410 by the refusal, rethrown as it was; other errors go uncounted', async () => {
    for (const [code, outcome] of [
      ['refresh_unavailable', 'suite 503'],
      ['connection_error', 'suite 410'],
    ] as const) {
      const error = new AppError(code);
      const { tokens, seen } = tokensAnswering(() => Promise.reject(error));
      await expect(tokens.tokenFor(row)).rejects.toBe(error);
      expect(seen).toEqual([outcome]);
    }
    const { tokens, seen } = tokensAnswering(() => Promise.reject(new Error('database')));
    await expect(tokens.tokenFor(row)).rejects.toThrow('database');
    expect(seen).toEqual([]);
  });
});

describe('countedMailer', () => {
  it('counts a sent message and a refused one', async () => {
    const seen: string[] = [];
    const metrics = {
      mail: (transport: string, outcome: string) => seen.push(`${transport} ${outcome}`),
    };
    const mail = { to: 'a@example.com', subject: 's', text: 't', html: 'h' };
    const ok = countedMailer({ send: async () => ({ messageId: '<1@x>' }) }, 'smtp', metrics);
    expect(await ok.send(mail, AbortSignal.timeout(1000))).toEqual({ messageId: '<1@x>' });
    const refused = countedMailer(
      { send: () => Promise.reject(new Error('550')) },
      'smtp',
      metrics,
    );
    await expect(refused.send(mail, AbortSignal.timeout(1000))).rejects.toThrow('550');
    expect(seen).toEqual(['smtp sent', 'smtp failed']);
  });
});

describe('measuredJobs', () => {
  it('counts completed, retried (attempts left) and failed (the last) attempts with durations', async () => {
    const seen: string[] = [];
    let fail = false;
    const [job] = measuredJobs(
      [
        {
          name: 'test.job',
          payload: undefined as never,
          run: async () => {
            if (fail) throw new Error('no');
          },
        } as JobDefinition<unknown>,
      ],
      { jobRun: (queue, outcome, seconds) => seen.push(`${queue} ${outcome} ${seconds >= 0}`) },
    );
    const run = (isLastAttempt: boolean): JobRun => ({
      id: '1',
      signal: AbortSignal.timeout(1000),
      isLastAttempt,
    });
    await job?.run({}, run(false));
    fail = true;
    await expect(job?.run({}, run(false))).rejects.toThrow('no');
    await expect(job?.run({}, run(true))).rejects.toThrow('no');
    expect(seen).toEqual([
      'test.job completed true',
      'test.job retried true',
      'test.job failed true',
    ]);
    expect(job?.name).toBe('test.job');
  });
});

describe('countedEdge', () => {
  it('counts each answer by its status once it closes, and one cut short as 0 (code none)', () => {
    const seen: number[] = [];
    const handled: string[] = [];
    const edge = countedEdge(
      {
        claims: () => true,
        request: () => handled.push('request'),
        upgrade: () => {},
        close: () => {},
      } as EdgeProxy,
      { edgeRequest: (status) => seen.push(status) },
    );
    const response = (statusCode: number, writableFinished: boolean) =>
      Object.assign(new EventEmitter(), { statusCode, writableFinished });
    const answered = response(502, true);
    const cut = response(200, false);
    edge.request({} as IncomingMessage, answered as unknown as ServerResponse);
    edge.request({} as IncomingMessage, cut as unknown as ServerResponse);
    expect(seen).toEqual([]);
    answered.emit('close');
    cut.emit('close');
    expect(seen).toEqual([502, 0]);
    expect(handled).toEqual(['request', 'request']);
    expect(edge.claims({} as IncomingMessage)).toBe(true);
  });
});
