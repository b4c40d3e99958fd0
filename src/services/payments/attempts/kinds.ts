import type { FollowUpKind } from './follow-up-kind.ts';
import { CAPTURE } from './capture.ts';
import { VOID } from './void.ts';
import { REFUND } from './refund.ts';

/** The operations on an authorized payment, each declared in a file of its own. */
export const FOLLOW_UPS: Record<FollowUpKind['op'], FollowUpKind> = { capture: CAPTURE, void: VOID, refund: REFUND };
