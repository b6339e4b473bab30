import { AgentState } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { AGENT_MOVES, type AgentAction, allowedTransitions, canApply } from './agent-lifecycle.js';

// The spec's Moves table, row by row: which states each action accepts.
const accepts: Record<AgentAction, AgentState[]> = {
  start: ['stopped'],
  stop: ['running'],
  restart: ['running'],
  destroy: ['running', 'stopped', 'error'],
};

describe('Agent lifecycle table', () => {
  for (const action of Object.keys(accepts) as AgentAction[]) {
    for (const state of AgentState.options) {
      const expected = accepts[action].includes(state);
      it(`${action} from ${state}: ${expected ? 'allowed' : '409'}`, () => {
        expect(canApply(action, state)).toBe(expected);
      });
    }
  }

  it('refuses DELETE in provisioning, starting, stopping, restarting and destroying', () => {
    for (const state of [
      'provisioning',
      'starting',
      'stopping',
      'restarting',
      'destroying',
    ] as const) {
      expect(canApply('destroy', state)).toBe(false);
    }
  });

  it('completes transient states where the spec says', () => {
    expect(AGENT_MOVES.start).toMatchObject({ via: 'starting', done: 'running' });
    expect(AGENT_MOVES.stop).toMatchObject({ via: 'stopping', done: 'stopped' });
    expect(AGENT_MOVES.restart).toMatchObject({ via: 'restarting', done: 'running' });
    expect(AGENT_MOVES.destroy).toMatchObject({ via: 'destroying', done: null });
  });

  it('lists every produced transition, and no jump between stable states', () => {
    const pairs = allowedTransitions();
    expect(pairs.has('provisioning->running')).toBe(true);
    expect(pairs.has('starting->error')).toBe(true);
    expect(pairs.has('stopped->running')).toBe(false);
    expect(pairs.has('error->running')).toBe(false);
  });
});
