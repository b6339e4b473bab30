import { expect } from 'vitest';
import { type Conformance, loadConformance } from './conformance.js';
import type { HetznerStandIn } from './stand-in.js';

/**
 * The conformance checker, or undefined with the reason printed: behaviour is still asserted
 * then, only the mismatch assertions are left out.
 */
export async function conformanceOrWarn(): Promise<Conformance | undefined> {
  const loaded = await loadConformance();
  // CI gives the description (`.ci/run` sets HCLOUD_OPENAPI): there, its absence is a failure.
  if ('skipped' in loaded && process.env.CI) throw new Error(loaded.skipped);
  if ('skipped' in loaded) {
    console.warn(`Hetzner conformance not checked: ${loaded.skipped}`);
    return undefined;
  }
  return loaded;
}

/** Asserts that every exchange so far matched the description (when it could be read). */
export function expectConformant(conformance: Conformance | undefined): void {
  if (!conformance) {
    console.warn('Hetzner conformance not checked: HCLOUD_OPENAPI could not be read');
    return;
  }
  expect(conformance.mismatches).toEqual([]);
  expect(conformance.checked).toBeGreaterThan(0);
}

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** Hetzner's JSON, read freely by the tests (its shape is checked by the conformance). */
  readonly body: any;
}

export type Api = (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;

/** Calls the stand-in through `fetch`, as a driver would. */
export function apiOf(standIn: HetznerStandIn, token = standIn.token): Api {
  return async (method, path, body) => {
    const response = await fetch(`${standIn.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : undefined,
    };
  };
}

/** Polls `GET /actions/{id}` until the action ends; returns the final action. */
export async function waitForAction(api: Api, id: number, timeoutMs = 5_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api('GET', `/actions/${id}`);
    if (body.action.status !== 'running') return body.action;
    if (Date.now() > until) throw new Error(`action ${id} still running`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const SERVER_BODY = { server_type: 'cpx22', image: 'debian-12', location: 'hel1' };
