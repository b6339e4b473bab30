import {
  type Agent,
  createAgent,
  getAgent,
  listAgentPorts,
  listSessions,
  openAgentPort,
  shareAgentPort,
  signOut,
  unshareAgentPort,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { createIncusProject, incusContext } from '../../test/incus.js';
import { incusExec } from '../../test/incus-exec.js';
import { localhostLookup, localRequest } from '../../test/localhost-http.js';
import type { TestContext } from '../../test/test-context.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { issuePortCookie, portAccessKey } from '../agents/agent-port-access.js';
import { PORT_ACCESS_TTL_MS, ROLE_TTL_MS } from './edge-ports.js';

/**
 * The user's app inside the machine, on port 3000 (loopback only), run by the Agent's user: it
 * answers what it saw as JSON, and greets a WebSocket (a hand-made handshake and one text frame:
 * the image has Node but no `ws`).
 */
const APP = String.raw`
const http = require('node:http');
const crypto = require('node:crypto');
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ path: req.url, cookie: req.headers.cookie ?? null, port: req.headers['x-svc-port'] ?? null }));
});
server.on('upgrade', (req, socket) => {
  const accept = crypto.createHash('sha1')
    .update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  const text = Buffer.from('hello from 3000');
  socket.write(Buffer.concat([Buffer.from([0x81, text.length]), text]));
});
server.listen(3000, '127.0.0.1');
`;

// A server on port 3000 inside an Agent on Incus (its gateway behind TLS, reached by the edge
// with the service's client certificate) answers at 3000--<subdomain> for the right people.

describe('shared ports of an Agent on Incus', { timeout: 300_000 }, () => {
  let project: Awaited<ReturnType<typeof createIncusProject>>;
  let server: EdgeServer<TestContext>;
  let agent: Agent;
  let portUrl: string;
  const params = () => ({ id: agent.id, port: 3000 });
  const at = (path: string, headers: Record<string, string> = {}) =>
    localRequest(new URL(path, portUrl).toString(), { headers });
  const afterCaches = () => server.t.clock.advance(Math.max(PORT_ACCESS_TTL_MS, ROLE_TTL_MS) + 1);

  beforeAll(async () => {
    project = await createIncusProject();
    server = await startEdgeServer({
      host: '0.0.0.0',
      context: (env) => incusContext(project.name)(env),
    });
    await signUpUser(server.t.client);
    const created = await server.t.client.call(createAgent, {
      body: { name: 'incus ports', size: 'small', region: 'eu', billingType: 'metered' },
    });
    agent = await waitFor(
      async () => {
        const res = await server.t.client.call(getAgent, { params: { id: created.body.id } });
        return res.body.status === 'running' && (res.body as Agent);
      },
      240_000,
      'running',
    );
    portUrl = `http://3000--${agent.subdomain}.${new URL(server.baseUrl).host}/`;
    const started = await incusExec(
      project.name,
      `svc-${agent.id}`,
      `cat > /tmp/app.js <<'EOF'\n${APP}\nEOF\nchmod 644 /tmp/app.js\nsu agent -c "setsid nohup node /tmp/app.js </dev/null >/tmp/app.log 2>&1 &"`,
    );
    expect(started.code, started.stderr).toBe(0);
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    await project?.remove();
  });

  it('lists port 3000 as listening, through the gateway over TLS', async () => {
    const listed = await waitFor(
      async () => {
        const { body } = await server.t.client.call(listAgentPorts, { params: { id: agent.id } });
        return body.find((entry) => entry.port === 3000 && entry.listening);
      },
      30_000,
      'port 3000 listening',
    );
    expect(listed).toEqual({ port: 3000, share: null, listening: true, url: portUrl });
    const ports = (await server.t.client.call(listAgentPorts, { params: { id: agent.id } })).body;
    expect(ports.map((entry) => entry.port)).not.toContain(8443);
  });

  it('answers 404 unshared, anyone when public, the account with its cookie, 403 to others', async () => {
    expect((await at('/')).status).toBe(404);

    await server.t.client.call(shareAgentPort, { params: params(), body: { share: 'public' } });
    const open = await at('/x?y=1', {
      cookie: '__Host-svc_gateway=a; mine=1',
      'x-svc-port': '8443',
    });
    expect(open.status).toBe(200);
    expect(JSON.parse(open.body)).toEqual({ path: '/x?y=1', cookie: 'mine=1', port: null });
    const greeting = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${portUrl.replace('http', 'ws')}socket`, {
        lookup: localhostLookup,
      } as WebSocket.ClientOptions);
      ws.once('message', (data) => {
        resolve(String(data));
        ws.terminate();
      });
      ws.once('error', reject);
    });
    expect(greeting).toBe('hello from 3000');

    await server.t.client.call(shareAgentPort, { params: params(), body: { share: 'account' } });
    afterCaches();
    expect((await at('/')).status).toBe(401);
    const { url } = (await server.t.client.call(openAgentPort, { params: params(), body: {} }))
      .body;
    const redeemed = await localRequest(url);
    expect(redeemed.status).toBe(302);
    const cookie = ([redeemed.headers['set-cookie'] ?? []].flat()[0] as string).split(
      ';',
    )[0] as string;
    const res = await at('/', { cookie });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ cookie: null });

    // Someone outside the account, signed in: a well-signed cookie of theirs meets a 403.
    const strangerClient = server.t.newClient();
    const strangerId = (await signUpUser(strangerClient)).user.id;
    const strangerSession = (await strangerClient.call(listSessions)).body.sessions[0]?.id ?? '';
    const stranger = issuePortCookie(
      portAccessKey(server.t.ctx.secrets.hmacKey),
      {
        agentId: agent.id,
        port: 3000,
        userId: strangerId,
        opener: { kind: 'session', id: strangerSession },
      },
      Math.floor(server.t.clock.now().getTime() / 1000),
    );
    expect((await at('/', { cookie: `svc_port=${stranger}` })).status).toBe(403);
    // Signed out, their cookie is no cookie at all.
    await strangerClient.send(signOut);
    expect((await at('/', { cookie: `svc_port=${stranger}` })).status).toBe(401);

    await server.t.client.call(unshareAgentPort, { params: params() });
    afterCaches();
    expect((await at('/', { cookie })).status).toBe(404);
  });
});
