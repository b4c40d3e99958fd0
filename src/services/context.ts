import type { Db } from '../store/db.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { ProjectRow } from '../store/projects.ts';
import type { KeyCache } from './key-cache.ts';

/** What every use case needs: the store, the settings, a logger. */
export interface Ctx {
  db: Db;
  config: Config;
  log: Logger;
  /** API key -> project, in a running service (absent in one-off CLI commands) */
  keyCache?: KeyCache;
  /** runs a project's due jobs now (the test clock); wired by main.ts, absent in CLI commands */
  runDueJobs?: (projectId: string) => Promise<number>;
}

/** The project's clock: wall time plus the offset a test project has advanced by. */
export const nowFor = (p: Pick<ProjectRow, 'clock_offset_ms'>) => new Date(Date.now() + Number(p.clock_offset_ms));
