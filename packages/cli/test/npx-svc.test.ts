import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_VERSION } from '../src/version.js';

const run = promisify(execFile);
const repo = path.join(import.meta.dirname, '../../..');

/**
 * The repository's `npx svc` is the workspace's own bin (linked by `npm install`), never the
 * unrelated public package of that name: with the registry unreachable and npm offline, it still
 * answers, from the root and from inside a package.
 */
describe('npx svc in the repository', () => {
  it.each(['.', 'packages/server'])(
    'runs the workspace svc from %s without the registry',
    async (dir) => {
      const { stdout, stderr } = await run('npx', ['svc', '--version'], {
        cwd: path.join(repo, dir),
        env: {
          ...process.env,
          npm_config_registry: 'http://127.0.0.1:9',
          npm_config_offline: 'true',
          npm_config_yes: 'false',
        },
        timeout: 60_000,
      });
      expect(stdout).toBe(`${CLI_VERSION}\n`);
      expect(stderr).not.toMatch(/npm error|ENOTCACHED|127\.0\.0\.1:9/);
    },
  );
});
