import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';

/**
 * Request counts in fixed one-minute windows, for the per-project rate limit: in this node's
 * memory, or in Redis so every node shares one count (REDIS_URL). Either is a count that may be
 * lost (a restart, an evicted key) without harm; the limits that must hold across nodes count in
 * the database (store/platform/throttle.ts).
 */
export interface WindowCounter {
  /** Counts one hit of `key` in the window starting at `windowStart` (ms); answers the window's hits. */
  hit(key: string, windowStart: number): Promise<number>;
  close(): Promise<void>;
}

export const windowCounter = (redisUrl?: string): WindowCounter => (redisUrl ? redisCounter(redisUrl) : memoryCounter());

function memoryCounter(): WindowCounter {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    async hit(key, start) {
      let w = windows.get(key);
      if (!w || w.start !== start) {
        if (windows.size > 10_000) windows.clear();
        w = { start, count: 0 };
        windows.set(key, w);
      }
      return ++w.count;
    },
    async close() {},
  };
}

function redisCounter(url: string): WindowCounter {
  // loaded only when configured: ioredis takes a good part of a second to load
  const { Redis } = createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient };
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
  redis.on('error', () => {}); // a down Redis fails open (the caller lets the request through), it must not crash the process
  return {
    async hit(key, start) {
      const k = `tender:rl:${key}:${start}`;
      const res = await redis.multi().incr(k).pexpire(k, 61_000).exec();
      return Number(res?.[0]?.[1] ?? 0);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
