import { describe, expect, it } from 'vitest';
import { cleanUp } from './clean-up.js';

describe('cleanUp', () => {
  it('runs every step after a failing one, then throws what failed', async () => {
    const ran: string[] = [];
    const failing = cleanUp({
      instances: () => {
        ran.push('instances');
        throw new Error('instance busy');
      },
      acls: async () => {
        ran.push('acls');
      },
      project: async () => {
        ran.push('project');
        throw new Error('project in use');
      },
    });
    await expect(failing).rejects.toThrow(
      new AggregateError(
        [new Error('instance busy'), new Error('project in use')],
        'failed: instances, project',
      ),
    );
    expect(ran).toEqual(['instances', 'acls', 'project']);
    await expect(cleanUp({ only: () => Promise.reject(new Error('gone')) })).rejects.toThrow(
      'gone',
    );
    await expect(cleanUp({ fine: () => undefined })).resolves.toBeUndefined();
  });
});
