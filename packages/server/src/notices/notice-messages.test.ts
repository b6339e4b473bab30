import { describe, expect, it } from 'vitest';
import { MAIL_TEMPLATES } from '../mail/templates.js';
import { type NoticeFacts, noticeMessage } from './notice-messages.js';

const ACCOUNT = { slug: 'acme', name: 'Acme' };
const URL_BASE = 'https://svc.example';

describe('noticeMessage', () => {
  it('makes what others wrote one line and clips it, so the notice template takes every message', () => {
    const hostile = `Evil\r\nBcc: victim@example.com\u2028${'x'.repeat(3_000)}`;
    const all: NoticeFacts[] = [
      { kind: 'connection_error', provider: 'suite', providerAccountName: hostile },
      {
        kind: 'machine_error',
        machineKind: 'plain_vm',
        machineId: '00000000-0000-4000-8000-000000000001',
        name: hostile,
        reason: hostile,
      },
      {
        kind: 'agent_idle_stopped',
        agentId: '00000000-0000-4000-8000-000000000002',
        name: hostile,
      },
      { kind: 'subscription_past_due' },
    ];
    for (const facts of all) {
      const data = noticeMessage(facts, { ...ACCOUNT, name: hostile }, URL_BASE);
      expect(() => MAIL_TEMPLATES.notice.data.parse(data), facts.kind).not.toThrow();
      expect(data.subject).not.toMatch(/[\r\n]/);
    }
  });

  it('links each kind to the page where it is acted on', () => {
    const page = (facts: NoticeFacts) => noticeMessage(facts, ACCOUNT, URL_BASE).action.url;
    const id = '00000000-0000-4000-8000-000000000003';
    const base = `${URL_BASE}/dashboard/accounts/acme`;
    expect(page({ kind: 'connection_error', provider: 'code', providerAccountName: 'a' })).toBe(
      `${base}/apps`,
    );
    const machine = { kind: 'machine_error', machineId: id, name: 'n', reason: 'r' } as const;
    expect(page({ ...machine, machineKind: 'agent' })).toBe(`${base}/agents/${id}`);
    expect(page({ ...machine, machineKind: 'plain_vm' })).toBe(`${base}/plain-vms/${id}`);
    expect(page({ kind: 'agent_idle_stopped', agentId: id, name: 'n' })).toBe(
      `${base}/agents/${id}`,
    );
    expect(page({ kind: 'subscription_past_due' })).toBe(`${base}/billing`);
  });
});
