import { parseArgs } from 'node:util';
import { haproxyConfig } from './haproxy-config.js';

// `npm run haproxy-config -- --listen 0.0.0.0:80 --api 10.0.0.2:8080,10.0.0.3:8080
//   --edge 10.0.0.4:8080 --agent-domain agents.example.com`: HAProxy's configuration on stdout.
const { values } = parseArgs({
  options: {
    listen: { type: 'string', default: '0.0.0.0:80' },
    api: { type: 'string' },
    edge: { type: 'string', default: '' },
    'agent-domain': { type: 'string' },
    'check-interval-ms': { type: 'string', default: '1000' },
  },
});
const list = (value: string | undefined) => (value ?? '').split(',').filter(Boolean);
if (!values.api || !values['agent-domain']) {
  console.error('haproxy-config: --api host:port[,…] and --agent-domain are required');
  process.exit(2);
}
process.stdout.write(
  haproxyConfig({
    listen: values.listen,
    api: list(values.api),
    edge: list(values.edge),
    agentDomain: values['agent-domain'],
    checkIntervalMs: Number(values['check-interval-ms']),
  }),
);
