#!/usr/bin/env node
// Entry for `npx tender` and `npm start`: runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/index.ts');
