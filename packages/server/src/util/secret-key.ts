import { createSecretKey, type KeyObject } from 'node:crypto';

const prepared = new WeakMap<Buffer, KeyObject>();

/**
 * The key as a `KeyObject`, made once per key. Node turns a `Buffer` key into one at every
 * `createHmac` or `createDecipheriv` (checks included), which costs a hot path (an Agent's token
 * check, a cached app token) more than the MAC or the cipher itself. Only the key is kept: no
 * token, session or result is.
 */
export function secretKey(key: Buffer): KeyObject {
  let object = prepared.get(key);
  if (!object) {
    object = createSecretKey(key);
    prepared.set(key, object);
  }
  return object;
}
