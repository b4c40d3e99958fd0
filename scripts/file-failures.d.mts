/** The most telling line a crashed test file printed to stderr (see file-failures.mjs). */
export function firstErrorLine(lines: string[]): string;
declare const fileFailures: (source: AsyncIterable<{ type: string; data: unknown }>) => AsyncGenerator<string>;
export default fileFailures;
