// Runs with node: promptfoo's own runAssertions runs exported python assertions.
// Input: {"index", "jobs": [{"assertion": {"type": "python", "value": "file://..."}, "calls": [{"output", "context"}]}]}
// Output: {"scores": [[score or "error: ..." per call] per job]}; a job with "reasons": true gets
// [score, pass, reason] per call instead (a grading failure is a failed assertion scoring 0).
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
      if (job.reasons) row.push([component.score, component.pass, component.reason]);
      else row.push(component.error ? `error: ${component.reason}` : component.score);
    } catch (err) {
      row.push(`error: ${err}`);
    }
  }
  scores.push(row);
}
process.stdout.write('\n' + JSON.stringify({ scores }) + '\n');
process.exit(0);
