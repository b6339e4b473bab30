import { z } from 'zod';

// zod probes `new Function` to compile faster object parsers, when each object schema is built;
// the service's CSP forbids eval, so the probe would be reported as a violation on every load.
// This module is imported first, before any schema (the contract's) exists.
z.config({ jitless: true });
