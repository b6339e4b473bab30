import { GatewayCa } from '../src/crypto/gateway-ca.js';

/** A new gateway CA as the environment gives it in production (`GATEWAY_CA_CERT`, `_KEY`, PEM). */
export async function gatewayCaEnv(): Promise<{ GATEWAY_CA_CERT: string; GATEWAY_CA_KEY: string }> {
  const { cert, key } = await GatewayCa.generate();
  return { GATEWAY_CA_CERT: cert, GATEWAY_CA_KEY: key };
}
