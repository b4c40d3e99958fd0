import { CHALLENGE_CODE, TEST_CARDS, type TestCard } from '../../acquirer/simulator/cards.ts';

/** The simulator's test cards, as test projects see them (GET /v1/test/cards/, the sandbox wallet sheets). */
export type { TestCard };

export function testCards(): readonly TestCard[] {
  return TEST_CARDS;
}

/** The answer that passes the simulated 3-D Secure challenge, whatever the card. */
export const challengeCode = () => CHALLENGE_CODE;
