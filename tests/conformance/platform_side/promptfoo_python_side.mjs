// Runs with node: promptfoo's own runAssertions runs exported python assertions.
// Input: {"index", "jobs": [{"assertion": {"type": "python", "value": "file://..."}, "calls": [{"output", "context"}]}]}
// Output: {"scores": [[score or "error: ..." per call] per job]}; a job with "reasons": true gets
// [score, pass, first line of the reason] per call instead (a grading failure is a failed assertion scoring 0).
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
      if (job.reasons) row.push([component.score, component.pass, String(component.reason).split('\n')[0]]);
      else row.push(component.error ? `error: ${component.reason}` : component.score);
    } catch (err) {
      row.push(`error: ${err}`);
    }
  }
  scores.push(row);
}
// all of it, synchronously (a pipe takes a part at a time; process.exit must not cut the rest)
const out = Buffer.from('\n' + JSON.stringify({ scores }) + '\n');
for (let off = 0; off < out.length;) {
  try {
    off += fs.writeSync(1, out, off);
  } catch (err) {
    if (err.code !== 'EAGAIN') throw err;
  }
}
process.exit(0);
