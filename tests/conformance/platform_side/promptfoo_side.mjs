// Runs with node: score with promptfoo's own runAssertions. JSON in on stdin, JSON out on stdout.
// Input: {"index": path of promptfoo's dist/src/index.js, "asserts": [assertion], "pairs": [[output, expected]]}
// Output: {"scores": [[score per pair] per assertion]}; an assertion that throws (promptfoo's invariants,
// e.g. contains with an empty value) is "error": promptfoo fails the test with an error, not a score.
import fs from 'node:fs';

const data = JSON.parse(fs.readFileSync(0, 'utf8'));
const pf = await import(data.index);
const run = pf.assertions.runAssertions;
const scores = [];
for (const assertion of data.asserts) {
  const row = [];
  for (const [output, expected] of data.pairs) {
    try {
      const result = await run({
        prompt: 'p',
        provider: undefined,
        test: { vars: { expected }, assert: [assertion] },
        providerResponse: { output },
      });
      row.push(result.pass ? 1 : 0);
    } catch (err) {
      row.push('error');
    }
  }
  scores.push(row);
}
process.stdout.write('\n' + JSON.stringify({ scores }) + '\n');
process.exit(0);
