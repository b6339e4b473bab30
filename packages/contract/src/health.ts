import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

export const HealthStatus = z.object({ status: z.literal('ok') });

export const ReadyStatus = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({
    database: z.boolean(),
    migrations: z.boolean(),
    /** This process's start-up work (migrations, the job queue) is done. */
    started: z.boolean(),
    /** A signal came: the process is draining (a load balancer stops sending it requests). */
    stopping: z.boolean(),
  }),
});

export const healthz = defineEndpoint({
  id: 'healthz',
  method: 'GET',
  path: '/healthz',
  auth: 'none',
  tag: 'operations',
  summary: 'The process is up.',
  response: { status: 200, body: HealthStatus },
  errors: [],
});

export const readyz = defineEndpoint({
  id: 'readyz',
  method: 'GET',
  path: '/readyz',
  auth: 'none',
  tag: 'operations',
  summary:
    "The database is reachable, every migration is applied and this process's start-up work is done (503 with the same body otherwise).",
  response: { status: 200, body: ReadyStatus },
  errors: [],
});

export const openapi = defineEndpoint({
  id: 'openapi',
  method: 'GET',
  path: '/api/openapi.json',
  auth: 'none',
  tag: 'operations',
  summary: 'This document.',
  response: { status: 200, body: z.record(z.string(), z.unknown()) },
  errors: [],
});

export const metrics = defineEndpoint({
  id: 'metrics',
  method: 'GET',
  path: '/metrics',
  // Its own proof: the socket's peer on loopback, or `Authorization: Bearer <METRICS_TOKEN>`.
  auth: 'none',
  tag: 'operations',
  summary:
    "The service's metrics in Prometheus' text format, for this host (loopback) or with `Authorization: Bearer <METRICS_TOKEN>`.",
  response: { status: 200, description: 'Prometheus text exposition format.' },
  errors: ['unauthorized', 'forbidden'],
});

export const healthEndpoints = [healthz, readyz, openapi, metrics] as const;
