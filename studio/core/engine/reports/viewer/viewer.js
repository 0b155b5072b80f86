/* Grader Studio's run viewer: plain DOM, no dependency (docs/viewer.md says why).
 * Every string of the data is shown with textContent: nothing from a dataset, an output, a rationale
 * or a name ever becomes markup. The data is JSON in #studio-data, packed in columns that index one
 * string table (studio/core/engine/reports/viewer/pack.py). */
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("studio-data").textContent);
  var S = D.strings;
  var ROW = 30;            // px, one grid row (fixed: the virtual list places rows by arithmetic)
  var OVERSCAN = 8;
  var COMPARE = D.kind === "compare";
  var RUN = COMPARE ? D.b : D;   // the run whose columns the filters read first (B in a comparison)
  var N = COMPARE ? D.ra.length : D.n;

  function s(i) { return i === undefined || i === null || i < 0 ? "" : S[i]; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) { if (arguments[i]) { parent.appendChild(arguments[i]); } }
    return parent;
  }
  function child(parent, node) { parent.appendChild(node); return node; }
  function num(v, digits) { return v === null || v === undefined ? "—" : Number(v).toFixed(digits); }
  function pct(v) { return v === null || v === undefined ? "—" : (v * 100).toFixed(1) + "%"; }
  // a pass rate's 95% interval as runs show prints it ([27.5%, 53.9%]); "—" without one (no graded result)
  function rateCi(pair) { return pair && pair[0] !== null ? "[" + pct(pair[0]) + ", " + pct(pair[1]) + "]" : "—"; }
  function short(text, n) { text = text.replace(/\s+/g, " "); return text.length > n ? text.slice(0, n) + "…" : text; }

  // ---- rows: one index space; a comparison maps it to each run's rows -------------------------------
  function rowA(k) { return COMPARE ? D.ra[k] : -1; }
  function rowB(k) { return COMPARE ? D.rb[k] : k; }
  function anyRow(k) { var j = rowB(k); return j >= 0 ? [RUN, j] : [D.a, D.ra[k]]; }
  function sampleId(k) { var r = anyRow(k); return s(r[0].cols.sid[r[1]]); }
  function col(run, name, j) { return j < 0 ? -1 : run.cols[name][j]; }

  // ---- the state, kept in the link ------------------------------------------------------------------
  var KEYS = ["q", "status", "verdict", "label", "grader", "min", "max", "mf", "mv", "change", "sort", "desc", "sample"];
  var state = {};
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    state = {};
    KEYS.forEach(function (k) { var v = params.get(k); if (v !== null && v !== "") { state[k] = v; } });
  }
  function writeHash() {
    var params = new URLSearchParams();
    KEYS.forEach(function (k) { if (state[k] !== undefined && state[k] !== "") { params.set(k, state[k]); } });
    var text = params.toString();
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }

  // ---- graders ------------------------------------------------------------------------------------
  var graders = RUN.graders || [];
  function graderIndex() {
    if (!state.grader) { return -1; }
    for (var g = 0; g < graders.length; g++) { if (graders[g].key === state.grader) { return g; } }
    return -1;
  }
  function gradersOf(run) { return run.graders || []; }
  function headerOf(run) { return COMPARE ? D.headers[run === D.a ? 0 : 1] : D.header; }
  // a suite run without an overall rule has no score of its own: its graders' columns say it all
  var OWN_SCORE = !(COMPARE ? false : (D.graders.length && !D.header.overall));
  function graderOf(run, key) {
    var list = gradersOf(run);
    for (var g = 0; g < list.length; g++) { if (list[g].key === key) { return list[g]; } }
    return null;
  }
  // the score/verdict/status a filter reads: the chosen grader's, else the run's own
  function scoreOf(run, j, g) { if (j < 0) { return null; } return g ? g.score[j] : run.cols.score[j]; }
  function verdictOf(run, j, g) { if (j < 0) { return ""; } return s(g ? g.verdict[j] : run.cols.verdict[j]); }
  function statusOf(run, j, g) { if (j < 0) { return ""; } return s(g ? g.status[j] : run.cols.status[j]); }

  // ---- search: strings matched once each, rows by their texts' indexes -------------------------------
  var lower = null;
  function matchingStrings(q) {
    if (lower === null) { lower = S.map(function (t) { return t.toLowerCase(); }); }
    var hit = new Uint8Array(S.length);
    for (var i = 0; i < lower.length; i++) { if (lower[i].indexOf(q) !== -1) { hit[i] = 1; } }
    return hit;
  }
  var TEXT_COLS = ["sid", "input", "output", "expected", "rationale", "error"];
  function rowHasText(run, j, hit) {
    if (j < 0) { return false; }
    for (var c = 0; c < TEXT_COLS.length; c++) { var x = run.cols[TEXT_COLS[c]][j]; if (x >= 0 && hit[x]) { return true; } }
    var list = gradersOf(run);
    for (var g = 0; g < list.length; g++) {
      var r = list[g].rationale[j]; if (r >= 0 && hit[r]) { return true; }
      var e = list[g].error[j]; if (e >= 0 && hit[e]) { return true; }
    }
    return false;
  }

  // ---- filter and sort ----------------------------------------------------------------------------
  var shown = new Int32Array(0);
  function applyFilters() {
    var g = graderIndex() >= 0 ? graders[graderIndex()] : null;
    var q = (state.q || "").toLowerCase();
    var hit = q ? matchingStrings(q) : null;
    var lo = state.min !== undefined ? parseFloat(state.min) : NaN;
    var hi = state.max !== undefined ? parseFloat(state.max) : NaN;
    var meta = state.mf !== undefined ? RUN.meta[state.mf] : undefined;
    var metaA = COMPARE && state.mf !== undefined ? D.a.meta[state.mf] : undefined;
    var mv = state.mv;
    var out = new Int32Array(N), n = 0;
    for (var k = 0; k < N; k++) {
      var j = rowB(k), i = rowA(k);
      var run = j >= 0 ? RUN : D.a, at = j >= 0 ? j : i;
      var gg = g && run !== RUN ? graderOf(run, g.key) : g;
      if (state.change && D.change[k] !== state.change) { continue; }
      if (state.status && statusOf(run, at, gg) !== state.status) { continue; }
      if (state.verdict && verdictOf(run, at, gg) !== state.verdict) { continue; }
      if (state.label && s(run.label[at]) !== state.label) { continue; }
      if (!isNaN(lo) || !isNaN(hi)) {
        var sc = scoreOf(run, at, gg);
        if (sc === null || (!isNaN(lo) && sc < lo) || (!isNaN(hi) && sc > hi)) { continue; }
      }
      if (state.mf !== undefined) {
        var column = run === RUN ? meta : metaA;
        var value = column ? s(column[at]) : "";
        if (mv !== undefined ? value !== mv : value === "") { continue; }
      }
      if (hit && !rowHasText(run, at, hit) && !(COMPARE && rowHasText(D.a, i, hit))) { continue; }
      out[n++] = k;
    }
    shown = out.subarray(0, n);
    sortRows();
  }

  function sortKey(name) {
    // a function k -> comparable value (number or string), null last
    var g = graderIndex() >= 0 ? graders[graderIndex()] : null;
    if (name === "idx") { return function (k) { var r = anyRow(k); return r[0].cols.idx[r[1]]; }; }
    if (name === "delta") { return function (k) { return D.delta[k]; }; }
    if (name === "change") { var rank = { regression: 0, improvement: 1, same: 2, "one side": 3 }; return function (k) { return rank[D.change[k]]; }; }
    if (name === "score_a") { return function (k) { var i = rowA(k); return i < 0 ? null : D.a.cols.score[i]; }; }
    if (name === "score" || name === "score_b") { return function (k) { return scoreOf(RUN, rowB(k), g); }; }
    if (name.indexOf("g:") === 0) {
      var key = name.slice(2);
      if (COMPARE) { var dl = D.grader_delta[key] || []; return function (k) { return dl[k] === undefined ? null : dl[k]; }; }
      var gr = graderOf(RUN, key); return function (k) { return gr ? gr.score[k] : null; };
    }
    if (name === "label") { return function (k) { var r = anyRow(k); return s(r[0].label[r[1]]) || null; }; }
    if (name.indexOf("ga:") === 0 || name.indexOf("gb:") === 0) {
      var side = name.indexOf("ga:") === 0 ? 0 : 1, verdicts = D.grader_verdict[name.slice(3)][side];
      return function (k) { return s(verdicts[k]) || null; };
    }
    if (name === "verdict_a") { return function (k) { return verdictOf(D.a, rowA(k), null) || null; }; }
    // a text column holds indexes into the string table: it sorts by the text
    var text = ["sid", "status", "verdict", "input", "output", "expected", "rationale", "error"].indexOf(name) >= 0;
    return function (k) {
      var r = anyRow(k), column = r[0].cols[name], v = column ? column[r[1]] : null;
      return text ? (s(v) || null) : (v === undefined ? null : v);
    };
  }
  function sortRows() {
    var name = state.sort;
    var arr = Array.prototype.slice.call(shown);
    if (!name) {
      if (COMPARE) {   // regressions first: the page's own order (computed at export)
        var pos = new Int32Array(N); D.order.forEach(function (k, p) { pos[k] = p; });
        arr.sort(function (x, y) { return pos[x] - pos[y]; });
      }
    } else {
      var key = sortKey(name), desc = state.desc === "1" ? -1 : 1;
      var vals = new Array(N);
      arr.forEach(function (k) { vals[k] = key(k); });
      arr.sort(function (x, y) {
        var a = vals[x], b = vals[y];
        if (a === null || a === undefined) { return b === null || b === undefined ? x - y : 1; }
        if (b === null || b === undefined) { return -1; }
        if (a < b) { return -desc; }
        if (a > b) { return desc; }
        return x - y;
      });
    }
    shown = Int32Array.from(arr);
  }

  // ---- the page's frame ---------------------------------------------------------------------------
  var root = el("div", "app");
  document.body.appendChild(root);
  var top = el("header", "top");
  var headerBox = el("section", "summary");
  var controls = el("section", "controls");
  var main = el("div", "main");
  var grid = el("div", "grid");
  var detail = el("aside", "detail");
  add(root, top, headerBox, controls, add(main, grid, detail));

  function title() {
    if (COMPARE) {
      var a = D.headers[0], b = D.headers[1];
      return "Run " + b.id + " against run " + a.id + " · " + (b.dataset || "");
    }
    var h = D.header;
    var who = h.suite !== undefined && h.grader === null ? "suite " + (h.suite || "(one-off)") : h.grader + " v" + h.grader_version;
    return "Run " + h.id + " · " + who + " on " + h.dataset + " · " + h.status;
  }
  add(top, el("h1", null, title()),
      el("div", "made", "Grader Studio " + D.studio + " · exported " + D.made + " · opens offline, makes no network request"));
  var cut = D.cut;
  var cutWords = [];
  if (!cut.prompts) { cutWords.push("the judges' prompts and raw answers are left out (--no-prompts)"); }
  if (cut.text_chars !== null) {
    cutWords.push("texts longer than " + cut.text_chars.toLocaleString() + " characters are cut (" +
      cut.texts_cut.toLocaleString() + " texts, " + cut.chars_cut.toLocaleString() + " characters left out; --cut-text)");
  }
  add(top, el("p", "cut", cutWords.length ? "This file is cut: " + cutWords.join("; ") + "." : "This file is whole: nothing was cut."));
  top.lastChild.setAttribute("data-cut", cutWords.length ? "cut" : "whole");

  // ---- the header: the run's one summary, as runs show prints it ------------------------------------
  function card(label, value, key) {
    var c = el("div", "card");
    var v = el("div", "value", value);
    if (key) { v.setAttribute("data-figure", key); }
    return add(c, el("div", "label", label), v);
  }
  function graderCards(box, h, prefix) {
    if (h.graders && h.graders.length && !h.overall) {   // a suite without an overall score: its graders say it
      add(box, card("samples", h.done + "/" + h.total, prefix + "done"), card("suite", "no overall score: each grader below", null));
      return;
    }
    var agg = h.aggregates || {};
    var ci = agg.mean_ci && agg.mean_ci[0] !== null ? "[" + num(agg.mean_ci[0], 4) + ", " + num(agg.mean_ci[1], 4) + "]" : "";
    var counts = Object.keys(h.counts || {}).sort().map(function (k) { return k + " " + h.counts[k]; }).join("  ");
    var total = h.usage && h.usage.total ? h.usage.total : null;
    var cost = total ? total.cost_usd : null;
    add(box,
        card("mean", num(agg.mean, 4), prefix + "mean"),
        card("95% interval", ci || "—", prefix + "mean_ci"),
        card("pass rate (≥ " + agg.pass_threshold + ")", pct(agg.pass_rate), prefix + "pass_rate"),
        card("pass rate's 95% interval", rateCi(agg.pass_rate_ci), prefix + "pass_rate_ci"),
        card("n scored", agg.n === undefined || agg.n === null ? "—" : String(agg.n), prefix + "n"),
        card("samples", h.done + "/" + h.total, prefix + "done"),
        card("results", counts || "—", prefix + "counts"),
        total ? card("judge calls · tokens", total.calls + " · " + total.prompt_tokens + " + " + total.completion_tokens, prefix + "tokens") : null,
        card("cost", cost === null || cost === undefined ? "—" : "$" + cost, prefix + "cost"));
  }
  function suiteTable(h) {
    if (!h.graders || !h.graders.length) { return null; }
    var t = el("table", "graders");
    var head = add(el("tr"), el("th", null, "grader"), el("th", null, "mean"), el("th", null, "95% interval"),
                   el("th", null, "pass rate"), el("th", null, "its 95% interval"), el("th", null, "n"), el("th", null, "ok / error / invalid / NA"));
    add(t, head);
    h.graders.concat(h.overall ? [h.overall] : []).forEach(function (g) {
      var a = g.aggregates, tr = el("tr");
      tr.setAttribute("data-grader", g === h.overall ? "(overall)" : g.key);
      add(t, add(tr, el("td", null, g === h.overall ? "overall (" + g.rule + ")" : g.key + " v" + g.version),
                 el("td", "n", num(a.mean, 4)),
                 el("td", "n", a.mean_ci && a.mean_ci[0] !== null ? "[" + num(a.mean_ci[0], 4) + ", " + num(a.mean_ci[1], 4) + "]" : "—"),
                 el("td", "n", pct(a.pass_rate)), el("td", "n", rateCi(a.pass_rate_ci)), el("td", "n", String(a.n)),
                 el("td", "n", [g.counts.ok, g.counts.error, g.counts.invalid, g.counts.na].join(" / "))));
    });
    return t;
  }
  function histogram(hist) {
    var box = el("div", "hist");
    var max = Math.max.apply(null, hist.bins.concat([1]));
    hist.bins.forEach(function (c, i) {
      var width = (hist.high - hist.low) / hist.bins.length;
      var from = hist.low + i * width;
      var bar = el("div", "bar");
      bar.title = c + " results in [" + from.toFixed(2) + ", " + (from + width).toFixed(2) + (i === hist.bins.length - 1 ? "]" : ")");
      var fill = el("div", "fill");
      fill.style.height = Math.round(100 * c / max) + "%";
      add(box, add(bar, fill));
    });
    return add(el("figure", "histogram"), box,
               el("figcaption", null, "scores " + hist.low + " … " + hist.high + " (" + hist.bins.reduce(function (a, b) { return a + b; }, 0) + " scored)"));
  }
  function shownText(text, label) {
    var d = el("details", "terminal");
    add(d, el("summary", null, label), el("pre", null, text));
    return d;
  }
  if (!COMPARE) {
    var cards = el("div", "cards");
    graderCards(cards, D.header, "");
    add(headerBox, add(el("div", "row"), cards, OWN_SCORE ? histogram(D.histogram) : null), suiteTable(D.header),
        shownText(D.header_text, "as runs show prints it"));
  } else {
    var sides = el("div", "sides");
    [0, 1].forEach(function (i) {
      var h = D.headers[i], box = el("div", "side");
      var cardsBox = el("div", "cards");
      graderCards(cardsBox, h, i === 0 ? "a." : "b.");
      add(box, el("h2", null, (i === 0 ? "A · run " : "B · run ") + h.id + " · " + (h.grader ? h.grader + " v" + h.grader_version : "suite " + (h.suite || "(one-off)")) + " · " + h.status),
          cardsBox, suiteTable(h), shownText(D.header_texts[i], "as runs show prints it"));
      add(sides, box);
    });
    add(headerBox, pairedStats(), sides);
  }
  function pairedStats() {
    var box = el("div", "paired");
    add(box, el("h2", null, "Paired statistics (the studio's compare, on the samples both runs scored)"));
    var t = el("table", "stats");
    add(t, add(el("tr"), el("th", null, "grader"), el("th", null, "n common"), el("th", null, "mean A"), el("th", null, "mean B"),
               el("th", null, "delta B − A [95% CI]"), el("th", null, "B better / worse / tied"),
               el("th", null, "regressions (A pass, B fail)"), el("th", null, "improvements"), el("th", null, "McNemar exact p")));
    Object.keys(D.report.graders).forEach(function (key) {
      var r = D.report.graders[key];
      var ci = r.mean_delta_ci ? " [" + num(r.mean_delta_ci[0], 3) + ", " + num(r.mean_delta_ci[1], 3) + "]" : "";
      var tr = el("tr"); tr.setAttribute("data-grader", key || "(run)");
      add(t, add(tr, el("td", null, key || (r.run_a.grader + " v" + r.run_a.grader_version + " → " + r.run_b.grader + " v" + r.run_b.grader_version)),
                 el("td", "n", String(r.n_common)), el("td", "n", num(r.mean_a, 3)), el("td", "n", num(r.mean_b, 3)),
                 el("td", "n", num(r.mean_delta, 3) + ci), el("td", "n", r.wins + " / " + r.losses + " / " + r.ties),
                 el("td", "n regress", String(r.pass_a_fail_b)), el("td", "n", String(r.fail_a_pass_b)),
                 el("td", "n", r.mcnemar_p === null ? "undefined" : num(r.mcnemar_p, 4))));
    });
    add(box, t);
    if (D.report.only_a && D.report.only_a.length) { add(box, el("p", null, "graded by A only: " + D.report.only_a.join(", "))); }
    if (D.report.only_b && D.report.only_b.length) { add(box, el("p", null, "graded by B only: " + D.report.only_b.join(", "))); }
    return box;
  }

  // ---- controls -------------------------------------------------------------------------------------
  function distinct(columns) {
    var seen = {}, out = [];
    columns.forEach(function (column) {
      if (!column) { return; }
      for (var j = 0; j < column.length; j++) { var v = column[j]; if (v >= 0 && !seen[v]) { seen[v] = 1; out.push(S[v]); } }
    });
    return out.sort();
  }
  function select(name, label, options) {
    var box = el("label", "control", label + " ");
    var sel = el("select"); sel.name = name;
    add(sel, el("option", null, "any")).lastChild.value = "";
    options.forEach(function (o) { var opt = el("option", null, o); opt.value = o; sel.appendChild(opt); });
    sel.addEventListener("change", function () { set(name, sel.value); });
    return add(box, sel);
  }
  function input(name, label, type, width) {
    var box = el("label", "control", label + " ");
    var inp = el("input"); inp.name = name; inp.type = type; inp.size = width;
    if (type === "number") { inp.step = "any"; }
    var timer = 0;
    inp.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(function () { set(name, inp.value); }, 150); });
    inp.addEventListener("change", function () { clearTimeout(timer); set(name, inp.value); });
    return add(box, inp);
  }
  var runsForChoices = COMPARE ? [D.a, D.b] : [D];
  function runCols(name) { return runsForChoices.map(function (r) { return r.cols[name]; }); }
  var graderCols = function (name) { var out = []; runsForChoices.forEach(function (r) { gradersOf(r).forEach(function (g) { out.push(g[name]); }); }); return out; };
  add(controls, input("q", "Search", "search", 24));
  if (COMPARE) { add(controls, select("change", "Change", ["regression", "improvement", "same", "one side"])); }
  add(controls, select("status", "Status", distinct(runCols("status").concat(graderCols("status")))),
      select("verdict", "Verdict", distinct(runCols("verdict").concat(graderCols("verdict")))));
  if (graders.length) { add(controls, select("grader", "Grader", graders.map(function (g) { return g.key; }))); }
  add(controls, select("label", "Label" + (RUN.label_set ? " (" + RUN.label_set + ")" : ""), distinct(runsForChoices.map(function (r) { return r.label; }))),
      input("min", "Score ≥", "number", 5), input("max", "≤", "number", 5));
  var metaKeys = Object.keys(RUN.meta);
  if (COMPARE) { Object.keys(D.a.meta).forEach(function (k) { if (metaKeys.indexOf(k) < 0) { metaKeys.push(k); } }); }
  var mvBox = el("label", "control", "= ");
  var mvSel = el("select"); mvSel.name = "mv";
  mvSel.addEventListener("change", function () { set("mv", mvSel.value); });
  if (metaKeys.length) {
    var mf = select("mf", "Metadata", metaKeys);
    add(controls, mf, add(mvBox, mvSel));
  }
  var clear = el("button", null, "Clear filters");
  clear.type = "button";
  clear.addEventListener("click", function () { var keep = state.sample; state = {}; if (keep) { state.sample = keep; } update(true); });
  var count = el("span", "count");
  add(controls, clear, count);
  function fillMetaValues() {
    while (mvSel.firstChild) { mvSel.removeChild(mvSel.firstChild); }
    var any = el("option", null, "any value"); any.value = ""; mvSel.appendChild(any);
    if (state.mf === undefined) { return; }
    distinct(runsForChoices.map(function (r) { return r.meta[state.mf]; })).slice(0, 500).forEach(function (v) {
      var o = el("option", null, v); o.value = v; mvSel.appendChild(o);
    });
  }
  function syncControls() {
    Array.prototype.forEach.call(controls.querySelectorAll("select, input"), function (c) {
      if (c.name === "mv") { return; }
      var want = state[c.name] === undefined ? "" : state[c.name];
      if (c.value !== want && document.activeElement !== c) { c.value = want; }
    });
    fillMetaValues();
    mvSel.value = state.mv === undefined ? "" : state.mv;
  }
  function set(name, value) {
    if (value === "" || value === undefined) { delete state[name]; } else { state[name] = value; }
    if (name === "mf") { delete state.mv; }
    update(true);
  }

  // ---- the grid: a virtual list of fixed-height rows ------------------------------------------------
  var columns = [];
  if (COMPARE) {
    columns.push({ key: "idx", title: "#", width: 56, num: true, get: function (k) { var r = anyRow(k); return String(r[0].cols.idx[r[1]]); } });
    columns.push({ key: "sid", title: "sample", width: 120, get: sampleId });
    columns.push({ key: "change", title: "change", width: 104, get: function (k) { return D.change[k]; }, cls: function (k) { return "chg-" + D.change[k].replace(" ", "-"); } });
    if (D.report.suite) {   // per grader: A's verdict, B's verdict, the score's change
      Object.keys(D.grader_delta).forEach(function (key) {
        var v = D.grader_verdict[key];
        columns.push({ key: "ga:" + key, title: "A " + key, width: 76, get: function (k) { return s(v[0][k]); }, cls: function (k) { return "v-" + s(v[0][k]); } });
        columns.push({ key: "gb:" + key, title: "B " + key, width: 76, get: function (k) { return s(v[1][k]); }, cls: function (k) { return "v-" + s(v[1][k]); } });
        columns.push({ key: "g:" + key, title: "Δ " + key, width: 76, num: true, get: function (k) { var d = D.grader_delta[key][k]; return d === null ? "" : (d > 0 ? "+" : "") + d.toFixed(3); } });
      });
    } else {
    columns.push({ key: "verdict_a", title: "A", width: 62, get: function (k) { return verdictOf(D.a, rowA(k), null); }, cls: function (k) { return "v-" + verdictOf(D.a, rowA(k), null); } });
    columns.push({ key: "verdict", title: "B", width: 62, get: function (k) { return verdictOf(RUN, rowB(k), null); }, cls: function (k) { return "v-" + verdictOf(RUN, rowB(k), null); } });
    columns.push({ key: "score_a", title: "score A", width: 70, num: true, get: function (k) { var i = rowA(k); return i < 0 ? "" : num(D.a.cols.score[i], 3); } });
    columns.push({ key: "score_b", title: "score B", width: 70, num: true, get: function (k) { var j = rowB(k); return j < 0 ? "" : num(RUN.cols.score[j], 3); } });
    columns.push({ key: "delta", title: "Δ", width: 64, num: true, get: function (k) { var d = D.delta[k]; return d === null ? "" : (d > 0 ? "+" : "") + d.toFixed(3); } });
    }
    columns.push({ key: "input", title: "input", width: 0, get: function (k) { var r = anyRow(k); return short(s(r[0].cols.input[r[1]]), 160); } });
  } else {
    columns.push({ key: "idx", title: "#", width: 56, num: true, get: function (k) { return String(D.cols.idx[k]); } });
    columns.push({ key: "sid", title: "sample", width: 120, get: function (k) { return s(D.cols.sid[k]); } });
    if (OWN_SCORE) {
      columns.push({ key: "verdict", title: "verdict", width: 72, get: function (k) { return s(D.cols.verdict[k]); }, cls: function (k) { return "v-" + s(D.cols.verdict[k]); } });
      columns.push({ key: "score", title: "score", width: 64, num: true, get: function (k) { return num(D.cols.score[k], 3); } });
    }
    graders.forEach(function (g) {
      columns.push({ key: "g:" + g.key, title: g.key, width: 84, num: true, get: function (k) { return g.score[k] === null ? s(g.verdict[k]) : num(g.score[k], 3); }, cls: function (k) { return "v-" + s(g.verdict[k]); } });
    });
    columns.push({ key: "label", title: "label", width: 64, get: function (k) { return s(D.label[k]); } });
    columns.push({ key: "input", title: "input", width: 0, get: function (k) { return short(s(D.cols.input[k]), 160); } });
    columns.push({ key: "output", title: "output", width: 0, get: function (k) { return short(s(D.cols.output[k]), 160); } });
    columns.push({ key: "rationale", title: "rationale", width: 0, get: function (k) { var e = D.cols.error[k]; return short(e >= 0 ? "error: " + s(e) : s(D.cols.rationale[k]), 160); } });
  }
  var headRow = el("div", "grid-head");
  var body = el("div", "grid-body");
  body.tabIndex = 0;
  var spacer = el("div", "spacer");
  var layer = el("div", "layer");
  add(grid, headRow, add(body, add(spacer, layer)));
  function sizeCell(c, column) {
    if (column.width) { c.style.flex = "0 0 " + column.width + "px"; } else { c.style.flex = "1 1 0"; }
  }
  columns.forEach(function (column) {
    var h = el("button", "cell head" + (column.num ? " n" : ""), column.title);
    h.type = "button";
    h.setAttribute("data-sort", column.key);
    sizeCell(h, column);
    h.addEventListener("click", function () {
      if (state.sort === column.key) { if (state.desc === "1") { delete state.desc; } else { state.desc = "1"; } } else { state.sort = column.key; delete state.desc; }
      update(true);
    });
    headRow.appendChild(h);
  });
  var pool = [];
  function makeRow() {
    var r = el("div", "grid-row");
    columns.forEach(function (column) { var c = el("div", "cell" + (column.num ? " n" : "")); sizeCell(c, column); r.appendChild(c); });
    r.addEventListener("click", function () { select_(Number(r.getAttribute("data-k"))); });
    layer.appendChild(r);
    return r;
  }
  var selected = -1;
  var painted = false;
  function paint() {
    painted = false;
    var first = Math.max(0, Math.floor(body.scrollTop / ROW) - OVERSCAN);
    var last = Math.min(shown.length, Math.ceil((body.scrollTop + body.clientHeight) / ROW) + OVERSCAN);
    var need = last - first;
    while (pool.length < need) { pool.push(makeRow()); }
    for (var p = 0; p < pool.length; p++) {
      var r = pool[p];
      if (p >= need) { r.style.display = "none"; continue; }
      var pos = first + p, k = shown[pos];
      r.style.display = "";
      r.style.transform = "translateY(" + pos * ROW + "px)";
      r.setAttribute("data-k", String(k));
      r.setAttribute("data-sample", sampleId(k));
      r.className = "grid-row" + (k === selected ? " selected" : "") + (pos % 2 ? " odd" : "");
      for (var c = 0; c < columns.length; c++) {
        var cell = r.childNodes[c], column = columns[c];
        cell.textContent = column.get(k);
        cell.className = "cell" + (column.num ? " n" : "") + (column.cls ? " " + column.cls(k) : "");
      }
    }
  }
  function schedule() { if (!painted) { painted = true; requestAnimationFrame(paint); } }
  body.addEventListener("scroll", schedule);
  window.addEventListener("resize", schedule);
  body.addEventListener("keydown", function (e) {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") { return; }
    e.preventDefault();
    var pos = Array.prototype.indexOf.call(shown, selected);
    pos = Math.max(0, Math.min(shown.length - 1, pos + (e.key === "ArrowDown" ? 1 : -1)));
    if (shown.length) { select_(shown[pos]); reveal(pos); }
  });
  function reveal(pos) {
    var y = pos * ROW;
    if (y < body.scrollTop || y + ROW > body.scrollTop + body.clientHeight) { body.scrollTop = Math.max(0, y - body.clientHeight / 3); }
  }

  // ---- the selected sample, whole ---------------------------------------------------------------------
  function select_(k) {
    selected = k;
    state.sample = sampleId(k);
    writeHash();
    showDetail(k);
    schedule();
  }
  function section(parent, title) { var sec = el("section", "part"); add(parent, add(sec, el("h3", null, title))); return sec; }
  function para(parent, text, cls) { return add(parent, el("div", "text" + (cls ? " " + cls : ""), text)); }
  function graderBlock(parent, run, j, label) {
    // the judge's rationale first, then its error, then the exact prompt and raw answer, tokens
    var list = gradersOf(run);
    var entries = list.length ? list.map(function (g) {
      return { name: g.key + " v" + g.version, verdict: s(g.verdict[j]), score: g.score[j], rationale: s(g.rationale[j]),
               error: s(g.error[j]), calls: g.calls[j], ptok: g.ptok[j], ctok: g.ctok[j], cost: s(g.cost[j]) };
    }) : [{ name: headerOf(run).grader + " v" + headerOf(run).grader_version,
            verdict: s(run.cols.verdict[j]), score: run.cols.score[j], rationale: s(run.cols.rationale[j]),
            error: s(run.cols.error[j]), calls: run.cols.calls[j], ptok: run.cols.ptok[j], ctok: run.cols.ctok[j],
            cost: s(run.cols.cost[j]) }];
    entries.sort(function (x, y) { return (y.rationale ? 1 : 0) - (x.rationale ? 1 : 0); });
    entries.forEach(function (e) {
      var box = child(parent, el("div", "grader"));
      var head = el("h4", null, (label ? label + " · " : "") + e.name + ": ");
      add(head, el("span", "v-" + e.verdict, e.verdict), document.createTextNode(" · score " + num(e.score, 4)));
      add(box, head);
      if (e.error) { para(box, "error: " + e.error, "error"); }
      para(box, e.rationale || "(no rationale)", "rationale");
      prompts(box, e.calls);
      var tokens = el("div", "small", "tokens " + e.ptok + " prompt + " + e.ctok + " completion · cost " + (e.cost || "—"));
      tokens.setAttribute("data-cost", e.cost);
      add(box, tokens);
    });
  }
  function prompts(parent, calls) {
    if (calls === null || calls === undefined) {
      if (!D.cut.prompts) { add(parent, el("div", "small", "prompt and raw answer left out of this file (--no-prompts)")); }
      return;
    }
    var d = child(parent, el("details", "calls"));
    if (typeof calls === "number") {   // no judge call: the grader's raw answer
      add(d, el("summary", null, "raw answer"), el("pre", null, s(calls)));
      return;
    }
    add(d, el("summary", null, calls.length + " judge call" + (calls.length === 1 ? "" : "s") + ": the exact prompt and raw answer"));
    calls.forEach(function (call) {
      add(d, el("div", "call-title", s(call[0]) + " · " + call[3] + " prompt + " + call[4] + " completion tokens"));
      call[1].forEach(function (m) { add(d, add(el("div", "turn role-" + s(m[0]).replace(/[^a-z]/g, "")), el("div", "role", s(m[0])), el("pre", null, s(m[1])))); });
      add(d, add(el("div", "turn answer"), el("div", "role", "answer"), el("pre", null, s(call[2]))));
    });
  }
  function thread(parent, run, j) {
    var turns = run.cols.thread[j] || [];
    turns.forEach(function (t) {
      var role = s(t[0]);
      var box = child(parent, el("div", "turn role-" + role.replace(/[^a-z]/g, "")));
      add(box, el("div", "role", role === "document" ? "document (retrieved)" : role + (t[3] >= 0 ? " · " + s(t[3]) : "")), el("pre", null, s(t[1])));
      if (t[2] >= 0) { add(box, el("div", "role", "tool calls"), el("pre", "tools", s(t[2]))); }
    });
    var out = run.cols.output[j];
    if (out >= 0) { add(parent, add(el("div", "turn role-assistant graded"), el("div", "role", "assistant (the completion graded)"), el("pre", null, s(out)))); }
  }
  function labelsOf(parent, run, j) {
    var list = run.labels[j];
    if (!list) { para(parent, "no human label", "small"); return; }
    list.forEach(function (l) {
      para(parent, s(l[0]) + ": " + s(l[1]) + " — by " + (s(l[2]) || "unknown") + (l[4] >= 0 ? ", " + s(l[4]) : "") + (l[3] >= 0 ? "\n" + s(l[3]) : ""), "label");
    });
  }
  function showDetail(k) {
    while (detail.firstChild) { detail.removeChild(detail.firstChild); }
    if (k < 0) { add(detail, el("p", "hint", "Select a sample to read its thread, the judge's rationale and prompt.")); return; }
    var r = anyRow(k), run = r[0], j = r[1];
    var link = location.href.split("#")[0] + "#sample=" + encodeURIComponent(sampleId(k));
    var head = child(detail, el("div", "detail-head"));
    add(head, el("h2", null, "sample " + sampleId(k) + " (#" + run.cols.idx[j] + ")"));
    var a = el("a", "link", "link to this sample");
    a.href = "#sample=" + encodeURIComponent(sampleId(k));
    a.title = link;
    add(head, a);
    if (COMPARE) {
      add(head, el("div", "chg-" + D.change[k].replace(" ", "-"), D.change[k] + (D.delta[k] === null ? "" : " · Δ " + (D.delta[k] > 0 ? "+" : "") + D.delta[k].toFixed(4))));
      var pair = child(section(detail, "Rationales, A and B"), el("div", "pair"));
      var left = child(pair, el("div", "col")), right = child(pair, el("div", "col"));
      if (rowA(k) >= 0) { graderBlock(left, D.a, rowA(k), "A"); } else { para(left, "A has no result for this sample", "small"); }
      if (rowB(k) >= 0) { graderBlock(right, D.b, rowB(k), "B"); } else { para(right, "B has no result for this sample", "small"); }
      var t = section(detail, "Thread");
      thread(t, run, j);
      if (rowA(k) >= 0 && rowB(k) >= 0 && D.a.cols.output[rowA(k)] !== D.b.cols.output[rowB(k)]) {
        add(t, add(el("div", "turn role-assistant"), el("div", "role", "A's completion"), el("pre", null, s(D.a.cols.output[rowA(k)]))));
      }
    } else {
      if (OWN_SCORE) add(head, el("div", "facts", s(run.cols.verdict[j]) + " · score " + num(run.cols.score[j], 4) + " · status " + s(run.cols.status[j]) +
        (run.cols.ms[j] !== null ? " · " + Math.round(run.cols.ms[j]) + " ms" : "")));
      graderBlock(section(detail, graders.length ? "Graders (judges first)" : "Grader"), run, j, "");
      thread(section(detail, "Thread"), run, j);
    }
    var ref = section(detail, "Reference");
    para(ref, run.cols.expected[j] >= 0 ? s(run.cols.expected[j]) : "(none)");
    labelsOf(section(detail, "Human labels" + (run.label_set ? "" : "")), run, j);
    var metaBox = section(detail, "Metadata");
    var anyMeta = false;
    Object.keys(run.meta).forEach(function (key) { var v = run.meta[key][j]; if (v >= 0) { anyMeta = true; para(metaBox, key + ": " + S[v], "small"); } });
    if (!anyMeta) { para(metaBox, "(none)", "small"); }
  }

  // ---- one update: filters, count, grid, selection, link -------------------------------------------
  var lastFilter = null;
  function update(fromUser) {
    var filterKey = JSON.stringify([state.q, state.status, state.verdict, state.label, state.grader, state.min, state.max, state.mf, state.mv, state.change, state.sort, state.desc]);
    if (filterKey !== lastFilter) { lastFilter = filterKey; applyFilters(); }
    count.textContent = shown.length.toLocaleString() + " of " + N.toLocaleString() + " samples";
    count.setAttribute("data-count", String(shown.length));
    count.setAttribute("data-total", String(N));
    spacer.style.height = shown.length * ROW + "px";
    Array.prototype.forEach.call(headRow.childNodes, function (h) {
      var key = h.getAttribute("data-sort");
      h.classList.toggle("sorted", key === state.sort);
      h.setAttribute("aria-sort", key === state.sort ? (state.desc === "1" ? "descending" : "ascending") : "none");
    });
    var k = -1;
    if (state.sample !== undefined) {
      for (var i = 0; i < N; i++) { if (sampleId(i) === state.sample) { k = i; break; } }
    }
    if (k !== selected || !fromUser) {
      selected = k;
      showDetail(k);
      var pos = k < 0 ? -1 : Array.prototype.indexOf.call(shown, k);
      if (pos >= 0) { reveal(pos); }
    }
    syncControls();
    writeHash();
    schedule();
  }
  window.addEventListener("hashchange", function () { readHash(); update(false); });
  readHash();
  update(false);
  document.body.setAttribute("data-ready", "1");
})();
