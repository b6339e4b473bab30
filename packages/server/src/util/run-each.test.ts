import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/log-capture.js';
import { runEach } from './run-each.js';

describe('runEach', () => {
  const setup = () => {
    const logs = new LogCapture();
    return { logs, log: pino({ level: 'warn' }, logs) };
  };

  it('runs every step after one fails, logs it by name, and then fails with its error', async () => {
    const { logs, log } = setup();
    const ran: string[] = [];
    const boom = new Error('boom');
    const pass = runEach(log, {
      first: async () => {
        ran.push('first');
        throw boom;
      },
      second: async () => {
        ran.push('second');
      },
    });
    await expect(pass).rejects.toBe(boom);
    expect(ran).toEqual(['first', 'second']);
    expect(logs.entries()).toEqual([expect.objectContaining({ step: 'first', level: 40 })]);
  });

  it('names every failed step when more than one fails', async () => {
    const { logs, log } = setup();
    const pass = runEach(log, {
      a: () => Promise.reject(new Error('a')),
      b: () => Promise.resolve(),
      c: () => Promise.reject(new Error('c')),
    });
    await expect(pass).rejects.toThrow(
      new AggregateError([new Error('a'), new Error('c')], 'failed: a, c'),
    );
    expect(logs.entries().map((entry) => entry.step)).toEqual(['a', 'c']);
  });

  it('resolves when every step does', async () => {
    const { logs, log } = setup();
    await expect(runEach(log, { only: () => Promise.resolve(1) })).resolves.toBeUndefined();
    expect(logs.lines).toEqual([]);
  });
});
