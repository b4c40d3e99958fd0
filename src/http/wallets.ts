import { apiPlugins, surfacePlugins } from './registry.ts';
import { walletButtons } from './pay/render.ts';
import { walletARoutes } from './api/wallet-a.ts';
import { walletBRoutes, walletBTestRoutes } from './api/wallet-b.ts';
import { walletBTokenRoutes } from './wallet-b-token/index.ts';
import { walletPayRoutes } from './pay/wallet-pay.ts';
import { walletBButton, walletSheetRoutes } from './pay/wallet-sheet.ts';
import { walletAButton, walletAPayRoutes } from './pay/wallet-a-pay.ts';
import { projectCreatedHooks } from '../services/tenancy.ts';
import { onProjectCreated } from '../services/wallets.ts';

/** Every wallet route, page button and hook (docs/wallets.md). Called once from routes.ts. */
export function registerWallets() {
  if (surfacePlugins['wallet-b-token'].includes(walletBTokenRoutes)) return;
  surfacePlugins['wallet-b-token'].push(walletBTokenRoutes);
  apiPlugins.authenticated.push(walletARoutes, walletBRoutes);
  apiPlugins.test.push(walletBTestRoutes);
  apiPlugins.public.push(walletPayRoutes, walletAPayRoutes, walletSheetRoutes);
  walletButtons.push(walletAButton, walletBButton);
  projectCreatedHooks.push(onProjectCreated);
}
