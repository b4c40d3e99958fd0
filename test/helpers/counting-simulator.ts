import { createSimulator, type Simulator } from '../../src/acquirer/simulator/index.ts';

/**
 * The sandbox simulator, counting per project the 3-D Secure lookups and authorizations that
 * reach it: the risk tests' proof that a refused attempt was never sent to the acquirer.
 */
export function countingSimulator() {
  const sim = createSimulator();
  const reached = { threeDs: new Map<string, number>(), authorize: new Map<string, number>() };
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const connector: Simulator = {
    ...sim,
    authenticate3ds: (req) => (bump(reached.threeDs, req.project_id), sim.authenticate3ds(req)),
    authorize: (req) => (bump(reached.authorize, req.project_id), sim.authorize(req)),
  };
  return { connector, reached };
}
