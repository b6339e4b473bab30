import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogDestination, warningBox, warnLoudly } from './logger.js';

/** Collects what a logger writes; `isTTY` says whether it poses as a terminal. */
function destination(isTTY: boolean) {
  const chunks: string[] = [];
  const out: LogDestination & { text(): string } = {
    isTTY,
    write: (chunk: string) => {
      chunks.push(chunk);
    },
    text: () => chunks.join(''),
  };
  return out;
}

describe('logger', () => {
  it('writes JSON lines where the destination is no terminal', () => {
    const out = destination(false);
    createLogger({ logLevel: 'info' }, out).info({ accountId: 'a1' }, 'hello');
    const line = JSON.parse(out.text());
    expect(line).toMatchObject({ msg: 'hello', accountId: 'a1', level: 30, service: 'svc' });
  });

  it('writes readable lines on a terminal, credentials still redacted', () => {
    const out = destination(true);
    createLogger({ logLevel: 'info' }, out).info(
      { accountId: 'a1', token: 'secret-token-value' },
      'hello',
    );
    const text = out.text();
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toContain('hello');
    expect(text).toContain('INFO');
    expect(text).toContain('a1');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('secret-token-value');
  });

  it('writes one line per request on a terminal: method, path, status and time', () => {
    const out = destination(true);
    const log = createLogger({ logLevel: 'info' }, out).child({ subsystem: 'http' });
    const request = { requestId: 'r-1', method: 'POST', path: '/api/agents', status: 201, ms: 3.2 };
    log.info(request, 'request');
    log.info({ agentId: 'a1', driver: 'local' }, 'Agent stop: stopped');
    const rows = stripVTControlCharacters(out.text()).trimEnd().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/INFO.*: POST \/api\/agents 201 3\.2 ms\s*$/);
    expect(rows[1]).toContain('Agent stop: stopped');
    expect(rows[1]).toContain('"agentId":"a1"');
  });

  it('redacts credentials in JSON lines', () => {
    const out = destination(false);
    createLogger({ logLevel: 'info' }, out).info({ user: { password: 'hunter22' } }, 'x');
    expect(out.text()).not.toContain('hunter22');
    expect(JSON.parse(out.text()).user.password).toBe('[redacted]');
  });

  it('boxes a loud warning on a terminal and logs it as one warn line elsewhere', () => {
    const message = 'DEVELOPMENT KEYS IN USE: '.concat('word '.repeat(40)).trim();
    const terminal = destination(true);
    const log = createLogger({ logLevel: 'info' }, destination(false));
    warnLoudly(log, message, terminal);
    const rows = terminal.text().trimEnd().split('\n');
    expect(rows.length).toBeGreaterThan(3);
    expect(rows[0]).toMatch(/^╔═+╗$/);
    expect(rows.at(-1)).toMatch(/^╚═+╝$/);
    // Every row as wide as the frame, the words all there in order.
    expect(new Set(rows.map((r) => r.length)).size).toBe(1);
    const words = rows
      .slice(1, -1)
      .map((r) => r.slice(2, -2).trim())
      .join(' ');
    expect(words).toBe(message);

    const logs = destination(false);
    warnLoudly(createLogger({ logLevel: 'info' }, logs), message, destination(false));
    expect(JSON.parse(logs.text())).toMatchObject({ level: 40, msg: message });
  });

  it('wraps the box at the given width', () => {
    const rows = warningBox('aaa bbb ccc ddd', 7).split('\n');
    expect(rows.slice(1, -1)).toEqual(['║ aaa bbb ║', '║ ccc ddd ║']);
  });
});
