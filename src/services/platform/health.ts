import type { Ctx } from './context.ts';
import { ping } from '../../store/db/db.ts';

/** Whether the database answers (GET /readyz); never throws. */
export async function databaseReady(ctx: Ctx): Promise<boolean> {
  try {
    await ping(ctx.db);
    return true;
  } catch {
    return false;
  }
}
