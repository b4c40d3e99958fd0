// `node --import ./scripts/ts-register.mjs`: this project's .ts files run as scripts/ts-hooks.mjs strips them.
import { register } from 'node:module';
import { setSourceMapsEnabled } from 'node:process';

setSourceMapsEnabled(true); // stack traces name the .ts lines
register('./ts-hooks.mjs', import.meta.url);
