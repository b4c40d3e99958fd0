// A node:test reporter that names every test file which failed as a whole (it crashed on import, a
// missing file, an exit with an error) and prints the first line of its error. node's own reporters only
// say 'test failed' for such a file and count it as one test, which hides the tests it never ran.
const ERROR_LINE = /^(?:[\w$.]*(?:Error|Exception)\b|Error \[|\w+: )/;

/** The most telling line a crashed file printed: its error's message, else its first non-empty line. */
export function firstErrorLine(lines) {
  const text = lines
    .join('')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return text.find((l) => ERROR_LINE.test(l) && !l.startsWith('at ')) ?? text[0] ?? '(no output)';
}

export default async function* fileFailures(source) {
  const stderr = new Map(); // file -> lines it wrote to stderr
  const ranTests = new Set(); // files in which at least one test ran
  const failedFiles = [];
  // file -> the time its top-level tests took, to see which files to split (node 20 reports no
  // event for a whole file that passed, and events of parallel files arrive interleaved)
  const spent = new Map();
  for await (const { type, data } of source) {
    if ((type === 'test:pass' || type === 'test:fail') && data.file && data.nesting === 0 && data.name !== data.file) {
      spent.set(data.file, (spent.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
    if (type === 'test:stderr' && data.file) {
      if (!stderr.has(data.file)) stderr.set(data.file, []);
      stderr.get(data.file).push(data.message);
    } else if ((type === 'test:pass' || type === 'test:fail') && data.file && data.name !== data.file) {
      ranTests.add(data.file);
    }
    if (type === 'test:fail' && data.file && data.name === data.file) failedFiles.push(data.file);
  }
  const slowest = [...spent].sort((a, b) => b[1] - a[1]).slice(0, 10);
  if (slowest.length > 1) {
    yield `\nslowest files: ${slowest.map(([f, ms]) => `${f.replace(/^.*?\/test\//, 'test/')} ${Math.round(ms / 1000)} s`).join(', ')}\n`;
  }
  if (!failedFiles.length) return;
  let out = `\n${failedFiles.length} test file(s) failed as a whole (their own tests are not counted above):\n`;
  for (const file of failedFiles) {
    const when = ranTests.has(file) ? 'after its tests ran' : 'before its first test';
    out += `  ${file} (${when}): ${firstErrorLine(stderr.get(file) ?? [])}\n`;
  }
  yield out;
}
