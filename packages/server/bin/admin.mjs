#!/usr/bin/env node
// `npm run admin -- <command>`: the operator CLI from its build (dist/admin/main.mjs), built first
// when it is missing or older than its sources, so that a command never compiles TypeScript.
import { launch } from './launch.mjs';

await launch('admin');
