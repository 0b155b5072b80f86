'use strict';
// The Node worker's request loop (the JavaScript twin of studio_guest/loop.py): JSON lines in on
// stdin, JSON lines out on fd 3 (fd 1 and 2 are /dev/null). It is started by node_main.py, which has
// already dropped privileges, set the rlimits and installed the seccomp filter before exec'ing node.
//
// A grader is a promptfoo `javascript` assertion: inline code called as
// new Function('output', 'context', 'process', body) or a CommonJS module whose export (or the named
// export) is called with (output, context). The result is normalised exactly as promptfoo's
// handleJavascript does: boolean, number (threshold) or {pass, score, reason}; a throw fails the
// assertion with score 0; `not-javascript` inverts the verdict.
const fs = require('node:fs');
const readline = require('node:readline');

const OUT = 3;
const CAPTURE = 4096;
const state = { grader: null, printed: null };

function send(message) {
  const data = Buffer.from(JSON.stringify(message) + '\n');
  let off = 0;
  while (off < data.length) off += fs.writeSync(OUT, data, off, data.length - off);
}

function capture(...args) {
  const own = state.printed;
  if (own === null) return;
  const text = args.map((a) => (typeof a === 'string' ? a : safeString(a))).join(' ') + '\n';
  if (own.text.length < CAPTURE) own.text += text.slice(0, CAPTURE - own.text.length);
}
for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace']) console[name] = capture;
process.on('unhandledRejection', () => {});
process.on('uncaughtException', () => {});

function safeString(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text;
  } catch {
    try { return String(value); } catch { return '<unprintable>'; }
  }
}

// promptfoo's buildFunctionBody: an expression gets `return`; a declaration list gets `return`
// before its final expression (semicolons inside strings, template literals and comments ignored).
function findLastStatementSemicolon(code) {
  let last = -1;
  let quote = null;
  let escaped = false;
  let line = false;
  let block = false;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    const next = code[i + 1];
    if (line) { if (c === '\n') line = false; continue; }
    if (block) { if (c === '*' && next === '/') { block = false; i++; } continue; }
    if (quote) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '/' && next === '/') { line = true; i++; continue; }
    if (c === '/' && next === '*') { block = true; i++; continue; }
    if (c === '"' || c === "'" || c === '`') { quote = c; continue; }
    if (c === ';') last = i;
  }
  return last;
}

function buildFunctionBody(code) {
  const trimmed = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(trimmed)) {
    const at = findLastStatementSemicolon(trimmed);
    if (at !== -1) {
      const statements = trimmed.slice(0, at + 1);
      const expression = trimmed.slice(at + 1).trim();
      if (expression) return `${statements} return ${expression}`;
    }
    return trimmed;
  }
  return `return ${trimmed}`;
}

// promptfoo renders the inline value with Nunjucks and the test's vars before running it; the
// studio imports only plain {{ name }} / {{ name.path }} placeholders (no filters, tags or logic).
function render(code, vars) {
  return code.replace(/\{\{\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*\}\}/g, (_m, path) => {
    let value = vars;
    for (const part of path.split('.')) value = value == null ? undefined : value[part];
    return value == null ? '' : String(value);
  });
}

function isGradingResult(r) {
  return typeof r === 'object' && r !== null && typeof r.pass === 'boolean' && typeof r.score === 'number' &&
    typeof r.reason === 'string' && (r.namedScores === undefined || typeof r.namedScores === 'object') &&
    (r.namedScoreWeights === undefined || typeof r.namedScoreWeights === 'object') &&
    (r.tokensUsed === undefined || typeof r.tokensUsed === 'object') &&
    (r.componentResults === undefined || Array.isArray(r.componentResults)) &&
    (r.assertion === undefined || r.assertion === null || typeof r.assertion === 'object') &&
    (r.comment === undefined || typeof r.comment === 'string');
}

async function validateResult(result) {
  result = await Promise.resolve(result);
  if (typeof result === 'boolean' || typeof result === 'number' || isGradingResult(result)) return result;
  throw new Error(`Custom function must return a boolean, number, or GradingResult object. Got type ${typeof result}: ${safeString(result)}`);
}

function normalize(grader, result) {
  const inverse = grader.negate;
  if (typeof result === 'boolean') {
    const pass = result !== inverse;
    return { pass, score: pass ? 1 : 0, reason: pass ? 'Assertion passed' : `Custom function returned ${result ? 'true' : 'false'}` };
  }
  if (typeof result === 'number') {
    // handed over undecided: whether a number passes (promptfoo's rule at the assertion's threshold,
    // inverted by not-javascript) is decided by the studio's one pass rule module (graders/javascript.py)
    return { number: true, score: result };
  }
  const pass = result.pass !== inverse;
  const reason = pass === result.pass ? result.reason : pass ? 'Assertion passed' : `Custom function returned ${result.pass ? 'true' : 'false'}`;
  const out = { pass, score: result.score, reason };
  if (result.namedScores && typeof result.namedScores === 'object') out.namedScores = result.namedScores;
  return out;
}

function loadModule(source, name) {
  const module = { exports: {} };
  const wrapper = new Function('module', 'exports', 'require', '__filename', '__dirname', source);
  wrapper(module, module.exports, require, '/tmp/assertion.js', '/tmp');
  const exported = module.exports;
  if (name && exported && typeof exported[name] === 'function') return exported[name];
  if (typeof exported === 'function') return exported;
  if (exported && typeof exported.default === 'function') return exported.default;
  throw new Error(`Assertion malformed: the module must export a function${name ? ` named ${name}` : ''} or have a default export as a function`);
}

function load(req) {
  const grader = { form: req.form, negate: !!req.negate, threshold: req.threshold, origin: req.origin, cache: new Map() };
  try {
    if (req.form === 'module') {
      grader.fn = loadModule(req.source, req.function);
    } else {
      grader.code = String(req.source).trimEnd();
      grader.templated = /\{\{|\{%/.test(grader.code);
      if (!grader.templated) grader.fn = compileInline(grader.code);
    }
  } catch (err) {
    const stage = err instanceof SyntaxError ? 'syntax' : 'execution';
    return { ok: false, stage, error: `${err && err.name ? err.name : 'Error'}: ${err && err.message}`.slice(0, 2000), line: null };
  }
  state.grader = grader;
  return { ok: true, entry: req.form === 'module' ? (req.function || 'default export') : 'inline', params: 2, is_async: false };
}

function compileInline(code) {
  const body = code.includes('\n') ? code : buildFunctionBody(code);
  return new Function('output', 'context', 'process', body);
}

// A module's function runs before promptfoo's handler (runAssertion's file:// branch): a throw there
// is an error of the test, not a failed assertion. What it returns is then checked inside the
// handler, where anything wrong fails the assertion with score 0.
async function runModule(grader, payload) {
  let raw;
  try {
    raw = await grader.fn(payload.output, payload.context);
  } catch (err) {
    return { raised: err };
  }
  try {
    if (raw === undefined) throw new Error('the module function returned undefined');
    if (!(typeof raw === 'boolean' || typeof raw === 'number' || typeof raw === 'object')) {
      throw new Error(`Invariant failed: Javascript assertion script must return a boolean, number, or object (${grader.origin})`);
    }
    return normalize(grader, await validateResult(raw));
  } catch (err) {
    return failed(err);
  }
}

function failed(err) {
  const message = err && err.message !== undefined ? err.message : String(err);
  return { pass: false, score: 0, reason: `Custom function threw error: ${message}` };
}

async function runOne(grader, payload) {
  if (grader.form === 'module') return runModule(grader, payload);
  try {
    let result;
    {
      let fn = grader.fn;
      if (grader.templated) {
        const code = render(grader.code, (payload.context && payload.context.vars) || {});
        fn = grader.cache.get(code);
        if (!fn) {
          fn = compileInline(code);
          if (grader.cache.size < 256) grader.cache.set(code, fn);
        }
      }
      result = await validateResult(fn(payload.output, payload.context, process));
    }
    return normalize(grader, result);
  } catch (err) {
    return failed(err);
  }
}

async function grade(req) {
  const grader = state.grader;
  const rid = req.id;
  for (let index = 0; index < req.samples.length; index++) {
    const own = { text: '' };
    state.printed = own;
    let entry;
    if (grader === null) {
      entry = [index, 6, 'no grader loaded', 'load'];
    } else {
      const value = await runOne(grader, req.samples[index]);
      if (value.raised !== undefined) {
        const err = value.raised;
        const name = err && typeof err.name === 'string' ? err.name : 'Error';
        entry = [index, 1, `${name}: ${err && err.message !== undefined ? err.message : safeString(err)}`.slice(0, 2000), name, null];
      } else {
        entry = [index, 0, value];
      }
    }
    state.printed = null;
    if (own.text) entry.push({ printed: own.text });
    send({ id: rid, r: [entry] });
  }
  const usage = process.cpuUsage();
  send({ id: rid, done: true, cpu: (usage.user + usage.system) / 1e6, strays: 0 });
}

function status(field) {
  try {
    const line = fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(field + ':'));
    return line ? line.split(':')[1].trim() : null;
  } catch { return null; }
}

async function main() {
  send({ op: 'ready', pid: process.pid, uid: process.getuid(), node: process.version,
         seccomp: status('Seccomp') === '2', no_new_privs: status('NoNewPrivs') === '1',
         landlock: process.env.STUDIO_LANDLOCK === '1' });
  delete process.env.STUDIO_LANDLOCK;
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    let req;
    try { req = JSON.parse(line); } catch { continue; }
    if (req.op === 'load') send({ op: 'loaded', ...load(req) });
    else if (req.op === 'grade') await grade(req);
    else if (req.op === 'exit') break;
  }
  process.exit(0);
}

main();
