import { z } from 'zod';
import { SearchQuery } from './bundles.js';
import { defineEndpoint } from './endpoint.js';

// Routes the server serves outside the JSON router: the public pages (HTML) and the fs object
// store's uploads (raw bytes). Described here so the OpenAPI document lists every route.

const Address = z.object({ accountSlug: z.string(), name: z.string() });
const Version = Address.extend({ version: z.string().regex(/^[1-9][0-9]*$/) });

export const explorePage = defineEndpoint({
  id: 'explorePage',
  method: 'GET',
  path: '/explore',
  auth: 'none',
  tag: 'bundle pages',
  summary: 'Search published bundles as a page: a search form, tag chips, orders and cards.',
  query: SearchQuery,
  response: { status: 200, description: 'An HTML page; 400 (HTML) for a malformed search.' },
  errors: [],
});

export const accountPage = defineEndpoint({
  id: 'accountPage',
  method: 'GET',
  path: '/{accountSlug}',
  auth: 'none',
  tag: 'bundle pages',
  summary:
    "For a browser (`Accept: text/html`): the account's published bundles as cards, a page at a time.",
  params: z.object({ accountSlug: z.string() }),
  query: z.object({ cursor: z.string().optional() }),
  response: {
    status: 200,
    description: 'An HTML page; 404 (HTML) for an unknown account, JSON 404 for other clients.',
  },
  errors: [],
});

export const bundlePage = defineEndpoint({
  id: 'bundlePage',
  method: 'GET',
  path: '/{accountSlug}/{name}',
  auth: 'none',
  tag: 'bundle pages',
  summary: 'The public page of a bundle (latest version): manifest, README, files, versions.',
  params: Address,
  response: { status: 200, description: 'An HTML page; 404 (HTML) when it is not a bundle.' },
  errors: [],
});

export const bundleVersionPage = defineEndpoint({
  id: 'bundleVersionPage',
  method: 'GET',
  path: '/{accountSlug}/{name}/versions/{version}',
  auth: 'none',
  tag: 'bundle pages',
  summary: 'The public page of one version.',
  params: Version,
  response: { status: 200, description: 'An HTML page.' },
  errors: [],
});

export const bundleFilePage = defineEndpoint({
  id: 'bundleFilePage',
  method: 'GET',
  path: '/{accountSlug}/{name}/versions/{version}/files/{path}',
  auth: 'none',
  tag: 'bundle pages',
  summary: 'One file of a version as a page (escaped text); `?raw=1` downloads its bytes.',
  params: Version.extend({ path: z.string() }),
  query: z.object({ raw: z.string().optional() }),
  response: { status: 200, description: 'An HTML page, or the raw bytes as an attachment.' },
  errors: [],
});

export const bundleDownload = defineEndpoint({
  id: 'bundleDownload',
  method: 'GET',
  path: '/{accountSlug}/{name}/versions/{version}/download',
  auth: 'none',
  tag: 'bundle pages',
  summary: "A version's tarball (gzip), as an attachment.",
  params: Version,
  response: { status: 200, description: 'application/gzip bytes.' },
  errors: [],
});

export const uploadObject = defineEndpoint({
  id: 'uploadObject',
  method: 'PUT',
  path: '/api/objects/uploads/{uploadId}',
  auth: 'none',
  tag: 'bundles',
  summary:
    'fs object store only: the upload URL `publish` hands out (HMAC-signed, expiring); the body is the raw bytes.',
  params: z.object({ uploadId: z.uuid() }),
  query: z.object({ sha256: z.string(), size: z.string(), exp: z.string(), sig: z.string() }),
  response: {
    status: 200,
    description: 'Stored; 400 when the bytes differ, 403 when the URL is bad or expired.',
  },
  errors: ['forbidden', 'upload_invalid'],
});

export const bundlePageEndpoints = [
  uploadObject,
  explorePage,
  accountPage,
  bundlePage,
  bundleVersionPage,
  bundleFilePage,
  bundleDownload,
] as const;
