import { apiPlugins, surfacePlugins } from './registry.ts';
import { portalRoutes } from './portal/index.ts';

/** Every capability's routes, in one place. app.ts mounts them on their surface. */
export function registerRoutes() {
  if (surfacePlugins.portal.length) return; // once per process
  surfacePlugins.portal.push(portalRoutes);
  void apiPlugins;
}
