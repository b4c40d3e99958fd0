import type { Db } from '../../store/db/db.ts';
import { PROJECTS_CHANNEL } from '../../store/platform/projects.ts';
import type { ProjectRow } from '../../domain/entities.ts';

/**
 * API key hash -> project, kept for `ttlMs`. Every API request would otherwise read api_keys and
 * projects before doing its work. A change clears the whole cache: in this process at once
 * (`clear` after the change commits), in the others through NOTIFY tender_projects. The TTL only
 * bounds how long a missed notification can matter. Unknown keys are never cached; each caller gets its own (shallow) copy, whose fields it may
 * reassign.
 */
export class KeyCache {
  private entries = new Map<string, { project: ProjectRow; at: number }>();
  /** Bumped by clear(): a lookup that started before a change does not cache what it read. */
  private generation = 0;

  constructor(private readonly ttlMs: number) {}

  async get(hash: string, load: () => Promise<ProjectRow | undefined>): Promise<ProjectRow | undefined> {
    const hit = this.entries.get(hash);
    if (hit && Date.now() - hit.at < this.ttlMs) return { ...hit.project };
    const generation = this.generation;
    const project = await load();
    if (project && this.ttlMs > 0 && generation === this.generation) {
      if (this.entries.size >= 10_000) this.entries.clear(); // bounded: keys are few, a flood of them is not worth keeping
      this.entries.set(hash, { project: { ...project }, at: Date.now() });
    }
    return project;
  }

  clear() {
    this.generation++;
    this.entries.clear();
  }

  /** Clears on every NOTIFY tender_projects; returns the stop function. */
  async listen(db: Db): Promise<() => Promise<void>> {
    return (await db.listen?.(PROJECTS_CHANNEL, () => this.clear())) ?? (async () => {});
  }
}
