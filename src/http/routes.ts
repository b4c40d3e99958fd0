import { apiPlugins, surfacePlugins } from './registry.ts';
import { portalRoutes } from './portal/index.ts';
import { webhookRoutes } from './api/webhooks.ts';
import { linkRoutes } from './api/links.ts';
import { linkPageRoutes } from './pay/link-page.ts';
import { payPages } from './pay/pages.ts';
import { vaultRoutes } from './vault/index.ts';
import { paymentRoutes } from './api/payments.ts';
import { testCardRoutes } from './api/test-cards.ts';
import { threeDsRoutes } from './pay/three-ds.ts';
import { moneyRoutes, moneyTestRoutes } from './api/money.ts';
import { searchRoutes } from './api/search.ts';
import { registerWallets } from './wallets.ts';
import { assetRoutes } from './pay/assets.ts';

/** Every capability's routes, in one place. app.ts mounts them on their surface. */
export function registerRoutes() {
  if (surfacePlugins.portal.length) return; // once per process
  surfacePlugins.portal.push(portalRoutes);
  apiPlugins.authenticated.push(webhookRoutes);
  apiPlugins.authenticated.push(linkRoutes);
  apiPlugins.public.push(linkPageRoutes);
  apiPlugins.public.push(payPages, assetRoutes);
  surfacePlugins.vault.push(vaultRoutes);
  apiPlugins.authenticated.push(paymentRoutes);
  apiPlugins.test.push(testCardRoutes);
  apiPlugins.public.push(threeDsRoutes);
  apiPlugins.authenticated.push(moneyRoutes);
  apiPlugins.test.push(moneyTestRoutes);
  apiPlugins.authenticated.push(searchRoutes);
  registerWallets();
  void apiPlugins;
}
