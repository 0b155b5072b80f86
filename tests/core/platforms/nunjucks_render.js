// Render exported llm-rubric prompts as promptfoo does (renderLlmRubricPrompt): the rubric prompt is
// a JSON list of messages; every string in it is rendered by Nunjucks (autoescape off, as promptfoo's
// getNunjucksEngine configures it) over the test's vars plus output and rubric.
// argv[2]: the node_modules promptfoo is installed in. stdin: {"prompts": [[{role, content}]], "cases": [{"prompt": i, "vars": {...}}]}; stdout: JSON list.
const path = require("path");
const nunjucks = require(path.join(process.argv[2], "nunjucks"));
const env = nunjucks.configure({ autoescape: false });
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const out = request.cases.map((c) => {
    const text = JSON.stringify(request.prompts[c.prompt]);
    const parsed = JSON.parse(text, (_k, v) => (typeof v === "string" ? env.renderString(v, c.vars) : v));
    return parsed;
  });
  process.stdout.write(JSON.stringify(out) + "\n");
});
