import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { resolveSecrets } from './dev-keys.js';

describe('development keys', () => {
  let dir = '';
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('are generated into DATA_DIR (mode 600) with a loud warning, then reused', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-keys-'));
    const { config, secrets: raw } = loadConfig({ DATA_DIR: dir });
    const warnings: string[] = [];
    const first = await resolveSecrets(config, raw, (m) => warnings.push(m));
    const file = path.join(dir, 'dev-keys.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(warnings[0]).toMatch(/DEVELOPMENT KEYS IN USE: ENCRYPTION_KEYS and HMAC_KEY/);
    const contents = await readFile(file, 'utf8');
    expect(warnings[0]).not.toContain(JSON.parse(contents).hmacKey);
    const second = await resolveSecrets(config, raw, () => {});
    expect(second.hmacKey.equals(first.hmacKey)).toBe(true);
    expect(second.encryption.keys.get(second.encryption.primaryId)?.length).toBe(32);
  });

  it('are not used for keys the environment provides', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'svc-keys-'));
    const hmac = Buffer.alloc(32, 7).toString('base64');
    const { config, secrets: raw } = loadConfig({ DATA_DIR: dir, HMAC_KEY: hmac });
    const warnings: string[] = [];
    const secrets = await resolveSecrets(config, raw, (m) => warnings.push(m));
    expect(secrets.hmacKey.toString('base64')).toBe(hmac);
    expect(warnings[0]).toMatch(/ENCRYPTION_KEYS not set/);
  });
});
