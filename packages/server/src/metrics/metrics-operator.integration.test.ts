import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cloneAgent, createAgent, getAgent, startAgent, stopAgent } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '../../test/metric-value.js';
import { promtool } from '../../test/promtool.js';
import type { TestClient } from '../../test/test-client.js';
import { createLocalTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

/** Every family the operator's dashboard and alerts read (deploy/), each in a scrape. */
export const OPERATOR_FAMILIES = [
  'svc_machines',
  'svc_machine_move_duration_seconds',
  'svc_machine_move_failures_total',
  'svc_jobs',
  'svc_job_oldest_waiting_seconds',
  'svc_job_runs_total',
  'svc_job_run_duration_seconds',
  'svc_app_token_requests_total',
  'svc_app_provider_request_duration_seconds',
  'svc_token_refreshes_total',
  'svc_db_pool_connections',
  'svc_db_pool_max_connections',
  'svc_db_pool_waiting',
  'svc_db_pool_waits_total',
  'svc_db_pool_wait_seconds_total',
  'svc_database_up',
  'svc_readiness',
  'svc_edge_routes_cached',
  'svc_edge_route_lookups_total',
  'svc_edge_requests_total',
  'svc_mail_deliveries_total',
  'svc_webhook_events_total',
  'svc_http_request_duration_seconds',
];

const DEPLOY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../deploy');
const ALERTS = path.join(DEPLOY, 'prometheus/alerts.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana/svc-dashboard.json');

/** The service's metric names an expression reads (`svc_…`, a histogram's series included). */
const namesIn = (text: string) => new Set(text.match(/\bsvc_[a-z0-9_]+/g) ?? []);

/** Whether a scrape has the family `name` names: itself, or the histogram it is a series of. */
const scraped = (text: string, name: string) =>
  text.includes(`# TYPE ${name} `) ||
  text.includes(`# TYPE ${name.replace(/_(bucket|sum|count)$/, '')} histogram`);

// What an operator watches, on the real service with the local driver: after an Agent is
// created, stopped, started and cloned, jobs ran and a mail went out, the scrape holds every
// family with values that say so, and promtool finds nothing to fault in it.

describe('the metrics an operator watches', { timeout: 120_000 }, () => {
  let t: TestContext;
  let owner: TestClient;

  beforeAll(async () => {
    t = await createLocalTestContext();
    owner = t.newClient();
    await signUpUser(owner);
  });
  afterAll(() => t?.close());

  const scrape = async () => (await t.newClient('127.0.0.1').get('/metrics')).body as string;
  const poll = (id: string, status: string) =>
    waitFor(
      async () =>
        ((await owner.send(getAgent, { params: { id } })).body as { status?: string }).status ===
        status,
      60_000,
      `${id} ${status}`,
    );
  const value = (name: string, labels: Record<string, string> = {}) =>
    metricValue(t.ctx.metrics.registry, name, labels);

  it('counts machines, their moves, jobs, mail, the pool and the edge routes, promtool-clean', async () => {
    const body = { name: 'watched', size: 'small', region: 'eu', billingType: 'metered' } as const;
    const { id, subdomain } = (await owner.call(createAgent, { body })).body as {
      id: string;
      subdomain: string;
    };
    await poll(id, 'running');
    await owner.call(stopAgent, { params: { id } });
    await poll(id, 'stopped');
    await owner.call(startAgent, { params: { id } });
    await poll(id, 'running');
    const clone = await owner.call(cloneAgent, {
      params: { id },
      body: { name: 'watched-clone', size: 'small', billingType: 'metered' },
    });
    await poll(clone.body.id, 'running');

    const local = { kind: 'agent', driver: 'local' };
    for (const move of ['create', 'stop', 'start', 'clone']) {
      expect(await value('svc_machine_move_duration_seconds', { ...local, move }), move).toBe(1);
    }
    // The jobs that made those moves ran once each, and the sign-up's mail went out.
    await waitFor(
      async () => (await value('svc_mail_deliveries_total', { outcome: 'sent' })) >= 1,
      15_000,
      'the mail',
    );
    expect(await value('svc_mail_deliveries_total', { outcome: 'failed' })).toBe(0);
    expect(await value('svc_job_runs_total', { queue: 'mail.send', outcome: 'completed' })).toBe(
      await value('svc_mail_deliveries_total', { outcome: 'sent' }),
    );
    const completed = await value('svc_job_runs_total', { outcome: 'completed' });
    expect(completed).toBeGreaterThanOrEqual(5);
    expect(await value('svc_job_run_duration_seconds')).toBe(
      completed +
        (await value('svc_job_runs_total', { outcome: 'retried' })) +
        (await value('svc_job_runs_total', { outcome: 'failed' })),
    );

    // The edge's cache: the first resolution asks the database, the second does not.
    const lookups = { hit: await value('svc_edge_route_lookups_total', { result: 'hit' }) };
    const misses = await value('svc_edge_route_lookups_total', { result: 'miss' });
    expect((await t.ctx.edgeRoutes.resolve(subdomain)).kind).toBe('route');
    expect((await t.ctx.edgeRoutes.resolve(subdomain)).kind).toBe('route');
    expect(await value('svc_edge_route_lookups_total', { result: 'miss' })).toBe(misses + 1);
    expect(await value('svc_edge_route_lookups_total', { result: 'hit' })).toBe(lookups.hit + 1);
    expect(await value('svc_edge_routes_cached')).toBeGreaterThanOrEqual(1);

    const text = await scrape();
    for (const name of OPERATOR_FAMILIES) expect(text).toContain(`# TYPE ${name} `);
    expect(text).toMatch(/^svc_machines\{kind="agent",state="running",driver="local"\} 2$/m);
    expect(text).toMatch(/^svc_readiness\{state="ready"\} 1$/m);
    expect(text).toMatch(/^svc_database_up 1$/m);
    expect(text).toMatch(/^svc_db_pool_max_connections 1$/m);
    expect(text).toMatch(/^svc_db_pool_connections\{state="in_use"\} [01]$/m);
    expect(text).toMatch(/^svc_job_oldest_waiting_seconds\{queue="[a-z.-]+"\} \d/m);
    expect(text).toMatch(/^svc_jobs\{queue="mail\.send",state="completed"\} [1-9]/m);
    // No id, address or e-mail is a label value.
    expect(text).not.toContain(id);
    expect(text).not.toContain(subdomain);
    expect(text).not.toContain('@example.com');

    const checked = promtool(['check', 'metrics'], text);
    expect(checked.output.trim()).toBe('');
    expect(checked.status).toBe(0);
  });

  it('ships alerting rules promtool passes and a dashboard whose every query names a scraped metric', async () => {
    const text = await scrape();
    const rules = promtool(['check', 'rules', ALERTS]);
    expect(rules.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(rules.status).toBe(0);
    const alerts = namesIn(await readFile(ALERTS, 'utf8'));
    expect(alerts.size).toBeGreaterThan(10);
    for (const name of alerts) expect(scraped(text, name), `alerts.yml: ${name}`).toBe(true);

    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as {
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
    };
    const graphs = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(graphs.length).toBeGreaterThan(20);
    for (const panel of graphs) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets ?? []) {
        const names = namesIn(expr);
        expect(names.size, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const name of names) expect(scraped(text, name), `${panel.title}: ${name}`).toBe(true);
      }
    }
    // Every family the operator watches has a panel.
    const shown = namesIn(
      graphs
        .flatMap((panel) => panel.targets ?? [])
        .map((t) => t.expr)
        .join(' '),
    );
    const families = [...shown].map((name) => name.replace(/_(bucket|sum|count)$/, ''));
    for (const name of OPERATOR_FAMILIES) expect(families, name).toContain(name);
  });

  it('fails loudly on a scrape promtool faults', () => {
    const bad = '# HELP svc_bad_thing Bad\n# TYPE svc_bad_thing counter\nsvc_bad_thing 1\n';
    const checked = promtool(['check', 'metrics'], bad);
    expect(checked.status).not.toBe(0);
    expect(checked.output).toContain('counter metrics should have "_total" suffix');
  });
});
