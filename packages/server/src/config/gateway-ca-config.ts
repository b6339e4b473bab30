import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GatewayCa } from '../crypto/gateway-ca.js';
import type { Config, RawSecrets } from './config.js';

const FILE = 'gateway-ca.json';
const NAMES = 'GATEWAY_CA_CERT, GATEWAY_CA_KEY';

/** The CA of the TLS path to cloud machines' gateways, as the environment gives it (PEM). */
export interface GatewayCaPem {
  readonly cert: string;
  readonly key: string;
}

/**
 * `GATEWAY_CA_CERT` and `GATEWAY_CA_KEY` (each PEM text or a PEM file's path): both or neither,
 * a CA certificate and its own key. Production with a cloud driver refuses to start without
 * them: generated ones would live beside the data they protect. Problems never quote a value.
 */
export function gatewayCaFromEnv(
  env: {
    readonly NODE_ENV: string;
    readonly COMPUTE_DRIVER: string;
    readonly GATEWAY_CA_CERT?: string | undefined;
    readonly GATEWAY_CA_KEY?: string | undefined;
  },
  problems: string[],
): GatewayCaPem | undefined {
  const isCloud = env.COMPUTE_DRIVER === 'incus' || env.COMPUTE_DRIVER === 'hetzner';
  if (!env.GATEWAY_CA_CERT || !env.GATEWAY_CA_KEY) {
    if (env.GATEWAY_CA_CERT || env.GATEWAY_CA_KEY) problems.push(`${NAMES}: set both or neither`);
    else if (isCloud && env.NODE_ENV === 'production') {
      problems.push(
        `${NAMES}: required when NODE_ENV=production with COMPUTE_DRIVER=${env.COMPUTE_DRIVER} (the CA certificate and key, PEM or file paths, that sign the machines' gateway certificates)`,
      );
    }
    return undefined;
  }
  const cert = pemOrFile(env.GATEWAY_CA_CERT);
  const key = pemOrFile(env.GATEWAY_CA_KEY);
  if (cert === undefined || key === undefined) {
    problems.push(`${NAMES}: each must be PEM text or the path of a readable PEM file`);
    return undefined;
  }
  try {
    const parsed = new X509Certificate(cert);
    if (!parsed.ca) problems.push('GATEWAY_CA_CERT: not a CA certificate');
    else if (!parsed.checkPrivateKey(createPrivateKey(key))) {
      problems.push("GATEWAY_CA_KEY: not the key of GATEWAY_CA_CERT's certificate");
    }
  } catch {
    problems.push(`${NAMES}: not a PEM certificate and private key`);
  }
  return { cert, key };
}

function pemOrFile(value: string): string | undefined {
  if (value.trimStart().startsWith('-----BEGIN')) return value;
  try {
    return readFileSync(value, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The gateway CA for a cloud driver: the environment's, or in development one taken from (or
 * generated into) `DATA_DIR/gateway-ca.json`, mode 600, with a warning. The local driver's
 * gateways are reached on loopback in plain HTTP: no CA.
 */
export async function resolveGatewayCa(
  config: Config,
  raw: RawSecrets,
  warn: (message: string) => void,
): Promise<GatewayCa | undefined> {
  if (raw.gatewayCa) return ready(new GatewayCa(raw.gatewayCa.cert, raw.gatewayCa.key));
  if (config.compute.driver === 'local') return undefined;
  if (config.env === 'production') throw new Error(`${NAMES}: required when NODE_ENV=production`);
  const file = path.join(config.dataDir, FILE);
  const pem = (await readCa(file)) ?? (await writeCa(file));
  warn(
    `DEVELOPMENT GATEWAY CA IN USE: ${NAMES} not set, using ${file}. Anyone who can read that file can pass for this service to its machines' gateways, or for a gateway to it.`,
  );
  return ready(new GatewayCa(pem.cert, pem.key));
}

/** The CA with its client certificate made, so the edge can connect at once. */
async function ready(ca: GatewayCa): Promise<GatewayCa> {
  await ca.serviceClient();
  return ca;
}

async function readCa(file: string): Promise<GatewayCaPem | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as GatewayCaPem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file} is damaged; remove it to generate a new development gateway CA`);
  }
}

async function writeCa(file: string): Promise<GatewayCaPem> {
  const pem = await GatewayCa.generate();
  await mkdir(path.dirname(file), { recursive: true });
  // `wx`: of two processes starting at once, the first one's CA is everybody's.
  await writeFile(file, `${JSON.stringify(pem, null, 2)}\n`, { mode: 0o600, flag: 'wx' }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    },
  );
  return (await readCa(file)) ?? pem;
}
