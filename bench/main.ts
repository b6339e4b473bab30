// `npm run bench -- <name>`: benchmarks print ratios against a baseline measured in the same run.
const benches: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  http: () => import('./http.js'),
  agents: () => import('./agents.js'),
  tokens: () => import('./tokens.js'),
  stage: () => import('./stage.js'),
  machines: () => import('./machines.js'),
  search: () => import('./search.js'),
  cli: () => import('./cli.js'),
  admin: () => import('./admin.js'),
  start: () => import('./start.js'),
  soak: () => import('./soak.js'),
};

const [name = '', ...args] = process.argv.slice(2);
const load = benches[name];
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exitCode = 2;
} else {
  await (await load()).run(args);
}
