import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conformance } from './conformance.js';
import { type HetznerStandIn, startHetznerStandIn } from './stand-in.js';
import {
  apiOf,
  conformanceOrWarn,
  expectConformant,
  SERVER_BODY,
  waitForAction,
} from './test-helpers.js';

describe('Hetzner stand-in: faults, authentication and rate limiting', () => {
  let conformance: Conformance | undefined;
  const started: HetznerStandIn[] = [];
  const start = async (options = {}) => {
    const standIn = await startHetznerStandIn({ conformance, actionMs: 50, ...options });
    started.push(standIn);
    return standIn;
  };

  beforeAll(async () => {
    conformance = await conformanceOrWarn();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((standIn) => standIn.close()));
  });

  it('fails the next matching requests, then answers normally', async () => {
    const standIn = await start();
    const api = apiOf(standIn);
    standIn.faults.failNext(
      { method: 'POST', path: /^\/servers$/ },
      { status: 503, code: 'unavailable' },
      2,
    );
    expect((await api('GET', '/servers')).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const failed = await api('POST', '/servers', { ...SERVER_BODY, name: 'f-1' });
      expect(failed.status).toBe(503);
      expect(failed.body.error).toEqual({
        code: 'unavailable',
        message: 'unavailable',
        details: {},
      });
    }
    expect(standIn.state.servers.size).toBe(0);
    expect((await api('POST', '/servers', { ...SERVER_BODY, name: 'f-1' })).status).toBe(201);
  });

  it('drops the connection without an answer', async () => {
    const standIn = await start();
    standIn.faults.failNext({ path: /^\/servers/ }, 'drop');
    await expect(apiOf(standIn)('GET', '/servers')).rejects.toThrow();
    expect((await apiOf(standIn)('GET', '/servers')).status).toBe(200);
  });

  it('delays matching requests until cleared', async () => {
    const standIn = await start();
    standIn.faults.delay(300, { path: /^\/locations/ });
    const before = Date.now();
    await apiOf(standIn)('GET', '/locations');
    expect(Date.now() - before).toBeGreaterThanOrEqual(290);
    standIn.faults.clear();
    const after = Date.now();
    await apiOf(standIn)('GET', '/locations');
    expect(Date.now() - after).toBeLessThan(290);
  });

  it('ends the next matching actions in error, and the server stays off', async () => {
    const standIn = await start();
    const api = apiOf(standIn);
    standIn.faults.failActions(
      { command: 'start_server' },
      { code: 'server_error', message: 'no capacity' },
    );
    const { body } = await api('POST', '/servers', { ...SERVER_BODY, name: 'a-1' });
    expect(await waitForAction(api, body.action.id)).toMatchObject({ status: 'success' });
    const startAction = await waitForAction(api, body.next_actions[0].id);
    expect(startAction).toMatchObject({
      status: 'error',
      error: { code: 'server_error', message: 'no capacity' },
    });
    expect((await api('GET', `/servers/${body.server.id}`)).body.server.status).toBe('off');
    const retry = await api('POST', `/servers/${body.server.id}/actions/poweron`);
    expect(await waitForAction(api, retry.body.action.id)).toMatchObject({ status: 'success' });
  });

  it('answers 401 to a wrong token', async () => {
    const standIn = await start({ token: 'right' });
    const answer = await apiOf(standIn, 'wrong')('GET', '/servers');
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('unauthorized');
    expect((await apiOf(standIn)('GET', '/servers')).status).toBe(200);
  });

  it('answers 429 once the bucket is empty, with RateLimit headers, and refills', async () => {
    const standIn = await start({ rateLimit: { limit: 3, refillPerSecond: 1 } });
    const api = apiOf(standIn);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await api('GET', '/servers');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-limit')).toBe('3');
      remaining.push(answer.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await api('GET', '/servers');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    const reset = Number(limited.headers.get('ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 2);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 4);
    expect(standIn.stats.rateLimited).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api('GET', '/servers')).status).toBe(200);
    expect(standIn.stats.requests).toBe(5);
    expect(standIn.stats.byOperation.get('GET /servers')).toBe(5);
  });

  it('answered every exchange as the description says', () => {
    expectConformant(conformance);
  });
});
