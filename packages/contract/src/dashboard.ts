import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';

// The dashboard's static files, served outside the JSON router; described so the OpenAPI
// document lists every route the service answers.

export const dashboardRoot = defineEndpoint({
  id: 'dashboardRoot',
  method: 'GET',
  path: '/',
  auth: 'none',
  tag: 'dashboard',
  summary: 'The dashboard (its index page; 503 with a hint when it has not been built).',
  response: { status: 200, description: 'An HTML page.' },
  errors: [],
});

export const dashboardEntry = defineEndpoint({
  id: 'dashboardEntry',
  method: 'GET',
  path: '/dashboard',
  auth: 'none',
  tag: 'dashboard',
  summary: 'Redirects to `/dashboard/`.',
  response: { status: 302, description: 'To `/dashboard/`.' },
  errors: [],
});

export const dashboardFile = defineEndpoint({
  id: 'dashboardFile',
  method: 'GET',
  path: '/dashboard/{path}',
  auth: 'none',
  tag: 'dashboard',
  summary:
    'A file of the dashboard build, or its index page for any other path (the client router takes over).',
  params: z.object({ path: z.string() }),
  response: { status: 200, description: 'A static file or the index page.' },
  errors: [],
});

export const svcDownload = defineEndpoint({
  id: 'svcDownload',
  method: 'GET',
  path: '/downloads/{file}',
  auth: 'none',
  tag: 'dashboard',
  summary:
    "Node and the one-file `svc` as a gzipped tarball, for machines to install at their first boot: `svc-<platform>-<arch>.tar.gz` of the service's own platform (e.g. `svc-linux-x64.tar.gz`); ETag is the build's hash.",
  params: z.object({ file: z.string() }),
  response: { status: 200, description: 'application/gzip' },
  errors: ['not_found'],
});

export const dashboardEndpoints = [
  dashboardRoot,
  dashboardEntry,
  dashboardFile,
  svcDownload,
] as const;
