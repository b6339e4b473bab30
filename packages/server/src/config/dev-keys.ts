import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config, RawSecrets } from './config.js';
import { resolveGatewayCa } from './gateway-ca-config.js';
import { parseEncryptionKeys, parseHmacKey, Secrets } from './secrets.js';

const FILE = 'dev-keys.json';

interface DevKeysFile {
  encryptionKeys: string;
  hmacKey: string;
}

/**
 * Completes the secrets. A key missing from the environment is taken from (or generated into)
 * `DATA_DIR/dev-keys.json`, mode 600, with a loud warning: fine for trying the service out, never
 * for production, where `loadConfig` already refused to start without them.
 */
export async function resolveSecrets(
  config: Config,
  raw: RawSecrets,
  warn: (message: string) => void,
): Promise<Secrets> {
  const gatewayCa = await resolveGatewayCa(config, raw, warn);
  if (raw.encryption && raw.hmacKey) {
    return new Secrets(
      raw.encryption,
      raw.hmacKey,
      raw.oauthClientSecrets,
      raw.s3Credentials,
      raw.hcloudToken,
      raw.smtpPassword,
      raw.metricsToken,
      raw.stripe,
      gatewayCa,
    );
  }
  if (config.env === 'production') throw new Error('Refusing to generate keys in production');
  const file = path.join(config.dataDir, FILE);
  const dev = (await readDevKeys(file)) ?? (await writeDevKeys(file));
  const encryption = raw.encryption ?? parseEncryptionKeys(dev.encryptionKeys);
  const hmacKey = raw.hmacKey ?? parseHmacKey(dev.hmacKey);
  if (typeof encryption === 'string' || typeof hmacKey === 'string') {
    throw new Error(`${file} is damaged; remove it to generate new development keys`);
  }
  const missing = [!raw.encryption && 'ENCRYPTION_KEYS', !raw.hmacKey && 'HMAC_KEY'].filter(
    Boolean,
  );
  warn(
    `DEVELOPMENT KEYS IN USE: ${missing.join(' and ')} not set, using ${file}. ` +
      'Anyone who can read that file can decrypt stored tokens and forge Agent tokens. ' +
      'Set the variables before exposing this service.',
  );
  return new Secrets(
    encryption,
    hmacKey,
    raw.oauthClientSecrets,
    raw.s3Credentials,
    raw.hcloudToken,
    raw.smtpPassword,
    raw.metricsToken,
    raw.stripe,
    gatewayCa,
  );
}

async function readDevKeys(file: string): Promise<DevKeysFile | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as DevKeysFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeDevKeys(file: string): Promise<DevKeysFile> {
  const keys: DevKeysFile = {
    encryptionKeys: `dev1:${randomBytes(32).toString('base64')}`,
    hmacKey: randomBytes(32).toString('base64'),
  };
  await mkdir(path.dirname(file), { recursive: true });
  // `wx`: two processes starting at once must not overwrite each other's keys.
  await writeFile(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' }).catch(
    async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    },
  );
  return (await readDevKeys(file)) ?? keys;
}
