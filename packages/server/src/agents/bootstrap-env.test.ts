import { describe, expect, it } from 'vitest';
import { agentBootstrapEnv } from './bootstrap-env.js';

const hmacKey = Buffer.alloc(32, 7);
const agent = { id: '0b9e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b', tokenGen: 2 };

describe("an Agent's bootstrap environment", () => {
  it('names where the machine reaches the service apart from where browsers do', () => {
    const env = agentBootstrapEnv(
      {
        publicUrl: 'http://localhost:8080',
        machineServiceUrl: 'http://10.77.0.1:8080',
        agentScheme: 'http',
      },
      hmacKey,
      agent,
    );
    expect(env).toMatchObject({
      SVC_API_URL: 'http://10.77.0.1:8080',
      SVC_PUBLIC_URL: 'http://localhost:8080',
      SVC_AGENT_ID: agent.id,
      SVC_GATEWAY_SECURE_COOKIES: 'false',
    });
  });

  it('gives the public URL for both where the machine reaches it there (local, cloud)', () => {
    const env = agentBootstrapEnv(
      { publicUrl: 'https://svc.example.com', agentScheme: 'https' },
      hmacKey,
      agent,
    );
    expect(env.SVC_API_URL).toBe('https://svc.example.com');
    expect(env.SVC_PUBLIC_URL).toBe('https://svc.example.com');
    expect(env.SVC_GATEWAY_SECURE_COOKIES).toBe('true');
  });
});
