import { describe, expect, it } from 'vitest';
import {
  CHARGE_RATE,
  canApply,
  HAS_SERVER,
  isTransient,
  type MachineAction,
  MachineState,
  MOVES,
  PROVISION_MOVE,
  REFUSED_DURING_DISK_OPERATION,
  SETTLED,
  statesWhere,
  TAKES_TOKEN_PUSH,
} from './lifecycle.js';

// The Moves table of docs/reference.md, row by row, written out here rather than read from the
// code: which states each action accepts.
const accepts: Record<MachineAction, MachineState[]> = {
  start: ['stopped'],
  stop: ['running'],
  restart: ['running'],
  destroy: ['running', 'stopped', 'error'],
  changeBilling: ['running', 'stopped'],
  transfer: ['running', 'stopped'],
  clone: ['running', 'stopped'],
  open: ['running'],
  resize: ['stopped'],
  snapshot: ['running', 'stopped'],
  restoreSnapshot: ['stopped'],
};

describe('the lifecycle table', () => {
  for (const action of Object.keys(accepts) as MachineAction[]) {
    for (const state of MachineState.options) {
      const expected = accepts[action].includes(state);
      it(`${action} from ${state}: ${expected ? 'allowed' : '409'}`, () => {
        expect(canApply(action, state)).toBe(expected);
      });
    }
  }

  it('completes each move in the state the reference names', () => {
    expect(MOVES.start).toMatchObject({ via: 'starting', done: 'running' });
    expect(MOVES.stop).toMatchObject({ via: 'stopping', done: 'stopped' });
    expect(MOVES.restart).toMatchObject({ via: 'restarting', done: 'running' });
    expect(MOVES.destroy).toMatchObject({ via: 'destroying', done: null });
    expect(PROVISION_MOVE).toEqual({ via: 'provisioning', done: 'running' });
  });

  it('refuses every move but start while the disk is copied for a clone', () => {
    expect(
      Object.entries(MOVES)
        .filter(([, move]) => move.refusedWhileCloning)
        .map(([action]) => action)
        .sort(),
    ).toEqual(['destroy', 'restart', 'stop']);
  });

  it('refuses every move and disk change, but not billing or open, during a snapshot or restore', () => {
    expect([...REFUSED_DURING_DISK_OPERATION].sort()).toEqual(
      [
        'clone',
        'destroy',
        'resize',
        'restart',
        'restoreSnapshot',
        'snapshot',
        'start',
        'stop',
        'transfer',
      ].sort(),
    );
  });

  it('calls exactly the states jobs work on transient', () => {
    expect(MachineState.options.filter(isTransient).sort()).toEqual(
      ['destroying', 'provisioning', 'restarting', 'starting', 'stopping'].sort(),
    );
  });
});

describe('the state groupings', () => {
  it('lists each grouping as the reference names it', () => {
    expect(statesWhere(SETTLED)).toEqual(['running', 'stopped']);
    expect(statesWhere(HAS_SERVER)).toEqual([
      'running',
      'stopping',
      'stopped',
      'starting',
      'restarting',
    ]);
    expect(statesWhere(TAKES_TOKEN_PUSH)).toEqual([
      'running',
      'stopping',
      'stopped',
      'starting',
      'restarting',
      'error',
    ]);
    expect(CHARGE_RATE).toMatchObject({ running: 'running', stopped: 'paused', error: null });
  });
});
