import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';

test('database pools: 10 connections for queries and 2 apart for CSV reports, each set from the environment', () => {
  assert.deepEqual(loadConfig({}).databasePool, { size: 10, reportSize: 2 });
  assert.deepEqual(loadConfig({ DATABASE_POOL_SIZE: '25', REPORT_CONNECTIONS: '4' }).databasePool, { size: 25, reportSize: 4 });
});
