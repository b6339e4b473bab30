import { describe, expect, it } from 'vitest';
import { answerHeaders, parseListeningPorts, requestedPort } from './port-proxy.js';

const HEAD =
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const row = (local: string, state: string) =>
  `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0`;

describe("the gateway's view of ports inside the machine", () => {
  it('lists LISTEN sockets on loopback or every address, 1024–65535, never its own port', () => {
    const tcp = [
      HEAD,
      row('0100007F:0BB8', '0A'), // 127.0.0.1:3000
      row('00000000:1F90', '0A'), // 0.0.0.0:8080
      row('0100007F:0050', '0A'), // 127.0.0.1:80: privileged
      row('0100007F:20FB', '0A'), // 127.0.0.1:8443: the gateway's own here
      row('0101A8C0:1389', '0A'), // 192.168.1.1:5001: not reachable on loopback
      row('0100007F:1770', '01'), // 127.0.0.1:6000 ESTABLISHED
      row('0200007F:1388', '0A'), // 127.0.0.2:5000: loopback too
    ].join('\n');
    const tcp6 = [
      HEAD,
      row('00000000000000000000000001000000:1771', '0A'), // [::1]:6001
      row('00000000000000000000000000000000:0BB8', '0A'), // [::]:3000 again
      row('0000000000000000FFFF00000100007F:1772', '0A'), // [::ffff:127.0.0.1]:6002
      row('20010DB8000000000000000000000001:1773', '0A'), // [2001:db8::1]:6003: not loopback
    ].join('\n');
    expect(parseListeningPorts([tcp, tcp6], 8443)).toEqual([3000, 5000, 6001, 6002, 8080]);
    expect(parseListeningPorts(['', 'garbage\nmore garbage'], 8443)).toEqual([]);
  });

  it('takes the edge’s x-svc-port only for a port it may proxy to', () => {
    expect(requestedPort({}, 8443)).toBeUndefined();
    expect(requestedPort({ 'x-svc-port': '3000' }, 8443)).toBe(3000);
    for (const value of ['8443', '80', '65536', '3000, 3001', 'x', '']) {
      expect(requestedPort({ 'x-svc-port': value }, 8443), value).toBeNull();
    }
  });

  it("keeps an app's cookies on its own host: none with Domain=, none of the service's names", () => {
    const headers = answerHeaders({
      'content-type': 'text/html',
      'set-cookie': [
        'session=1; Path=/; HttpOnly',
        'wide=1; Domain=agents.example.com; Path=/',
        'svc_gateway=forged; Path=/',
        '__Host-svc_port=forged; Path=/; Secure',
      ],
    });
    expect(headers).toEqual({
      'content-type': 'text/html',
      'set-cookie': ['session=1; Path=/; HttpOnly'],
    });
    expect(answerHeaders({ 'set-cookie': ['x=1; domain=.example.com'] })).toEqual({});
  });
});
