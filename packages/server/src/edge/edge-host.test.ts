import { describe, expect, it } from 'vitest';
import { agentHostMatcher } from './edge-host.js';

describe('which hosts are Agents', () => {
  it('with a port in the domain (one machine): exactly <label>.localhost:<port>', () => {
    const match = agentHostMatcher('localhost:8080', 'http://localhost:8080');
    expect(match('bot-a1b2c3.localhost:8080')).toEqual({ subdomain: 'bot-a1b2c3' });
    expect(match('Bot-A1B2C3.LOCALHOST:8080')).toEqual({ subdomain: 'bot-a1b2c3' });
    expect(match('bot-a1b2c3.localhost:8081')).toBeUndefined();
    expect(match('bot-a1b2c3.localhost')).toBeUndefined();
    expect(match('localhost:8080')).toBeUndefined();
    expect(match('a.bot-a1b2c3.localhost:8080')).toBeUndefined();
    expect(match('-bot.localhost:8080')).toBeUndefined();
    expect(match('bot_1.localhost:8080')).toBeUndefined();
    expect(match('.localhost:8080')).toBeUndefined();
    expect(match('evillocalhost:8080')).toBeUndefined();
    expect(match(undefined)).toBeUndefined();
  });

  it('without a port in the domain: the port of the Host is not compared', () => {
    const match = agentHostMatcher('agents.example.net', 'https://app.example.com');
    expect(match('bot-a1b2c3.agents.example.net')).toEqual({ subdomain: 'bot-a1b2c3' });
    expect(match('bot-a1b2c3.agents.example.net:443')).toEqual({ subdomain: 'bot-a1b2c3' });
    expect(match('agents.example.net')).toBeUndefined();
    expect(match('bot-a1b2c3.agents.example.net.evil.com')).toBeUndefined();
  });

  it("never takes the dashboard's own host, even when it is one label under the Agents' domain", () => {
    const match = agentHostMatcher('example.com', 'https://app.example.com');
    expect(match('app.example.com')).toBeUndefined();
    expect(match('APP.example.com:443')).toBeUndefined();
    expect(match('bot-a1b2c3.example.com')).toEqual({ subdomain: 'bot-a1b2c3' });
  });

  it('reads a shared port from <port>--<subdomain>, and only a port from 1024 to 65535', () => {
    const match = agentHostMatcher('localhost:8080', 'http://localhost:8080');
    expect(match('3000--bot-a1b2c3.localhost:8080')).toEqual({
      subdomain: 'bot-a1b2c3',
      port: 3000,
    });
    expect(match('65535--bot-a1b2c3.localhost:8080')).toEqual({
      subdomain: 'bot-a1b2c3',
      port: 65535,
    });
    // Not a port's host: a label like any other, which no Agent has (subdomains hold no `--`).
    expect(match('80--bot-a1b2c3.localhost:8080')).toEqual({ subdomain: '80--bot-a1b2c3' });
    expect(match('65536--bot-a1b2c3.localhost:8080')).toEqual({ subdomain: '65536--bot-a1b2c3' });
    expect(match('03000--bot-a1b2c3.localhost:8080')).toEqual({ subdomain: '03000--bot-a1b2c3' });
    expect(match('3000--.localhost:8080')).toBeUndefined();
    expect(match('3000---bot.localhost:8080')).toEqual({ subdomain: '3000---bot' });
    expect(match('a.3000--bot-a1b2c3.localhost:8080')).toBeUndefined();
  });
});
