// Runs with node: promptfoo's own runAssertions runs an exported python assertion on each call.
// Input: {"index", "assertion": {"type": "python", "value": "file://..."}, "calls": [{"output", "context"}]}
// Output: {"scores": [score or "error: ..." per call]}.
import fs from 'node:fs';

const data = JSON.parse(fs.readFileSync(0, 'utf8'));
const pf = await import(data.index);
const scores = [];
for (const call of data.calls) {
  try {
    const result = await pf.assertions.runAssertions({
      prompt: call.context.prompt,
      provider: undefined,
      test: { vars: call.context.vars, assert: [data.assertion] },
      providerResponse: { output: call.output },
    });
    const component = (result.componentResults || [])[0] || result;
    scores.push(component.error ? `error: ${component.reason}` : component.score);
  } catch (err) {
    scores.push(`error: ${err}`);
  }
}
process.stdout.write('\n' + JSON.stringify({ scores }) + '\n');
process.exit(0);
