// `npm run stand-in -- <suite|code|music> [publicUrl]`: one stand-in provider for local
// development. Prints the variables that point the service at it; log in with any name.
import { type StandInKind, startStandIn } from './stand-in-provider.js';

const [kind = '', publicUrl = 'http://localhost:8080'] = process.argv.slice(2);
if (!['suite', 'code', 'music'].includes(kind)) {
  console.error('usage: npm run stand-in -- <suite|code|music> [publicUrl]');
  process.exit(2);
}
const standIn = await startStandIn(kind as StandInKind, {
  redirectUri: `${publicUrl.replace(/\/+$/, '')}/api/apps/callback`,
});
console.log(`# ${kind} stand-in at ${standIn.issuer}; start the service with:`);
for (const [name, value] of Object.entries(standIn.env())) console.log(`export ${name}=${value}`);
process.on('SIGINT', () => standIn.close().then(() => process.exit(0)));
