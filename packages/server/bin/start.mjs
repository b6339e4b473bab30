#!/usr/bin/env node
// `npm start`: the service from its build (dist/server/main.mjs), built first when it is missing
// or older than its sources, so that a start never compiles TypeScript.
import { launch } from './launch.mjs';

await launch('server');
