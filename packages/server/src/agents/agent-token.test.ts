import { createHmac, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issueAgentToken, readAgentToken } from './agent-token.js';

const key = Buffer.alloc(32, 5);

describe('Agent HMAC tokens', () => {
  it('have the decided format and read back', () => {
    const id = randomUUID();
    const token = issueAgentToken(key, id, 3);
    const mac = createHmac('sha256', key).update(`svc1.${id}.3`).digest('base64url');
    expect(token).toBe(`svc1.${id}.3.${mac}`);
    expect(readAgentToken(key, token)).toEqual({ agentId: id, gen: 3 });
  });

  it('refuse another key, another generation, another Agent and malformed tokens', () => {
    const id = randomUUID();
    const token = issueAgentToken(key, id, 1);
    expect(readAgentToken(Buffer.alloc(32, 6), token)).toBeUndefined();
    expect(readAgentToken(key, token.replace(`.${1}.`, '.2.'))).toBeUndefined();
    expect(readAgentToken(key, token.replace(id, randomUUID()))).toBeUndefined();
    for (const bad of ['', 'svc1', `svc2.${id}.1.x`, `${token}x`, token.slice(0, -1)]) {
      expect(readAgentToken(key, bad)).toBeUndefined();
    }
  });

  it('reject any single-character change', () => {
    const token = issueAgentToken(key, randomUUID(), 7);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...'abcXYZ019-_.'), (at, ch) => {
        fc.pre(token[at] !== ch);
        const tampered = token.slice(0, at) + ch + token.slice(at + 1);
        expect(readAgentToken(key, tampered)).toBeUndefined();
      }),
    );
  });
});
