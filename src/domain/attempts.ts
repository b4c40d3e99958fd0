/** The kinds of acquirer operation Tender records as attempts (docs/money.md "Acquirer attempts"). */
export type OperationKind = 'three_ds' | 'authorization' | 'capture' | 'void' | 'refund' | 'inquiry' | 'reversal';
