import { CHALLENGE_CODE, TEST_CARDS, type TestCard } from '../../acquirer/simulator/cards.ts';
import { liabilityShift } from '../../domain/card.ts';

/** The simulator's test cards, as test projects see them (GET /v1/test/cards/, the sandbox wallet sheets). */
export type { TestCard };

export function testCards(): readonly TestCard[] {
  return TEST_CARDS;
}

/** A test card as the API (GET /v1/test/cards/) and the portal's test page show it. */
export interface TestCardView {
  pan: string;
  brand: string;
  brands: string[];
  three_ds: TestCard['three_ds'];
  /** the answer that passes its challenge (a card with 3-D Secure C) */
  challenge_code?: string;
  result: TestCard['result'];
  reason?: string;
  fault?: TestCard['fault'];
  liability_shift: boolean;
  description: string;
}

/** The test card table, one view for every surface that shows it. */
export function testCardViews(): TestCardView[] {
  return TEST_CARDS.map((c) => ({
    pan: c.pan,
    brand: c.brands[0],
    brands: [...c.brands],
    three_ds: c.three_ds,
    ...(c.three_ds === 'C' ? { challenge_code: CHALLENGE_CODE } : {}),
    result: c.result,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.fault ? { fault: c.fault } : {}),
    // a passed challenge shifts liability
    liability_shift: c.three_ds === 'C' ? true : liabilityShift(c.three_ds),
    description: c.description,
  }));
}
