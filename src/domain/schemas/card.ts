import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.ts';
import { cardInputExample, vaultCardExample } from './examples.ts';

/** A card number as the vault takes it: digits only (the check digit and brand are checked apart). */
export const PAN_PATTERN = '^[0-9]{12,19}$';
/** A card's expiry month: MMYYYY. */
export const EXPIRY_PATTERN = '^(0[1-9]|1[0-2])[0-9]{4}$';

/** A card to store: the vault API's body, and what the hosted form and wallets hand the vault. */
export const CardInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'cardholder name' })),
    pan: Type.String({
      pattern: PAN_PATTERN,
      format: 'card-number',
      description: 'card number, digits only, Luhn-valid, of a supported brand',
    }),
    expiry: Type.String({ pattern: EXPIRY_PATTERN, description: 'MMYYYY' }),
    setup_token: Uuid({ description: "the transaction's setup_token: one use, valid 300 s after order creation" }),
  },
  { additionalProperties: false, $id: 'CardInput', examples: [cardInputExample] },
);
export type CardInput = Static<typeof CardInput>;

/** A stored card as the vault answers it. */
export const VaultCard = Type.Object(
  {
    vault_token: Uuid(),
    truncated_pan: Type.String({ description: 'masked card number' }),
    brand: Type.String(),
    brands: Type.Array(Type.String()),
  },
  { $id: 'VaultCard', examples: [vaultCardExample] },
);
export type VaultCard = Static<typeof VaultCard>;
