import { describe, expect, it } from 'vitest';
import { forEachLimited } from './upload.js';

/** A task per item that ends only when the test says so. */
function gatedTasks() {
  const open = new Map<number, () => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  const started: number[] = [];
  const work = (item: number) =>
    new Promise<void>((resolve, reject) => {
      started.push(item);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      open.set(item, () => {
        inFlight -= 1;
        open.delete(item);
        if (item < 0) reject(new Error(`item ${item} failed`));
        else resolve();
      });
    });
  const settle = async () => {
    // Ends the oldest open task and lets the pool start the next.
    const [first] = open.values();
    first?.();
    await new Promise((r) => setImmediate(r));
  };
  return { work, settle, started, open, max: () => maxInFlight };
}

describe('forEachLimited', () => {
  it('runs at most `limit` at a time, as many as it may, every item once in order', async () => {
    const gate = gatedTasks();
    const items = Array.from({ length: 10 }, (_, i) => i);
    const all = forEachLimited(items, 4, gate.work);
    await new Promise((r) => setImmediate(r));
    expect(gate.open.size).toBe(4);
    while (gate.open.size > 0) await gate.settle();
    await all;
    expect(gate.max()).toBe(4);
    expect(gate.started).toEqual(items);
  });

  it('starts nothing after a failure, lets the running ones finish, then throws it', async () => {
    const gate = gatedTasks();
    const all = forEachLimited([-1, 1, 2, 3, 4, 5], 3, gate.work);
    const outcome = all.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await new Promise((r) => setImmediate(r));
    await gate.settle(); // -1 fails
    expect(gate.started).toEqual([-1, 1, 2]);
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // 1 and 2 still run
    while (gate.open.size > 0) await gate.settle();
    expect(await outcome).toBe('item -1 failed');
    expect(gate.started).toEqual([-1, 1, 2]);
  });
});
