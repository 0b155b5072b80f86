// Runs with node: promptfoo's own runAssertions runs exported python assertions.
// Input: {"index", "jobs": [{"assertion": {"type": "python", "value": "file://..."}, "calls": [{"output", "context"}]}]}
// Output: {"scores": [[score or "error: ..." per call] per job]}.
import fs from 'node:fs';

const data = JSON.parse(fs.readFileSync(0, 'utf8'));
const pf = await import(data.index);
const scores = [];
for (const job of data.jobs) {
  const row = [];
  for (const call of job.calls) {
    try {
      const result = await pf.assertions.runAssertions({
        prompt: call.context.prompt,
        provider: undefined,
        test: { vars: call.context.vars, assert: [job.assertion] },
        providerResponse: { output: call.output },
      });
      const component = (result.componentResults || [])[0] || result;
      row.push(component.error ? `error: ${component.reason}` : component.score);
    } catch (err) {
      row.push(`error: ${err}`);
    }
  }
  scores.push(row);
}
process.stdout.write('\n' + JSON.stringify({ scores }) + '\n');
process.exit(0);
