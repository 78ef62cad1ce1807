// The page's only script (served from /page.js: the CSP allows 'self' scripts and nothing
// inline). It renders the decision tables from the server's own endpoints and decides an
// evidence document through POST /route. A token, when the server asks for one, is kept in
// this variable only: never stored, never put in the URL.
"use strict";

const WORDS = ["pass", "fail", "unknown", "missing"];
const GATES = ["property_check", "fixture_check", "flaky_freeze"];
// Why each rule fires, in the ladder's words.
const WHY = {
  "evidence-gap": "a gate is missing: a gate that never ran is not a pass, and outranks a failure",
  "fail-absorbs": "a gate failed, and nothing was missing: a failure is absorbing",
  "inadmissible": "a gate gave no verdict (unknown): it is neither a pass nor a failure",
  "all-held": "all three gates passed",
};
let token = null;

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = "Bearer " + token;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try {
    json = await res.json();
  } catch (_) {
    json = null;
  }
  return { status: res.status, json };
}

function key(v) {
  return GATES.map((g) => v[g]).join("/");
}

async function renderTable() {
  const { status, json } = await call("GET", "/route/table");
  const body = document.querySelector("#table tbody");
  if (status !== 200 || !Array.isArray(json)) {
    const tr = el("tr");
    tr.append(el("td", "the table is not available (" + status + ")"));
    body.append(tr);
    return;
  }
  for (const row of json) {
    const tr = el("tr");
    tr.dataset.key = key(row.verdicts);
    for (const g of GATES) tr.append(el("td", row.verdicts[g]));
    tr.append(el("td", row.disposition, row.disposition));
    tr.append(el("td", row.attribution));
    tr.append(el("td", row.rule));
    tr.append(el("td", String(row.exit_code)));
    body.append(tr);
  }
}

async function renderGateRules() {
  const { status, json } = await call("GET", "/gate/rules");
  const body = document.querySelector("#gate-rules tbody");
  if (status !== 200 || !Array.isArray(json)) return;
  for (const r of json) {
    const tr = el("tr");
    tr.append(el("td", String(r.number)));
    tr.append(el("td", r.rule));
    tr.append(el("td", r.when));
    tr.append(el("td", r.disposition || "the router's"));
    tr.append(el("td", r.reason || "the router's attribution"));
    tr.append(el("td", r.exit_codes.join(", ")));
    body.append(tr);
  }
}

function documentOf(form) {
  const doc = {};
  for (const g of GATES) {
    const word = form.elements[g].value;
    if (word !== "(absent)") doc[g] = word;
  }
  return doc;
}

function highlight(verdicts) {
  const k = key(verdicts);
  for (const tr of document.querySelectorAll("#table tbody tr")) {
    tr.classList.toggle("hit", tr.dataset.key === k);
  }
  const hit = document.querySelector("#table tbody tr.hit");
  if (hit) hit.scrollIntoView({ block: "nearest" });
}

async function decide(event) {
  event.preventDefault();
  const form = event.target;
  const result = document.getElementById("result");
  const tokenField = document.getElementById("token");
  if (tokenField.value) token = tokenField.value;
  const doc = documentOf(form);
  document.getElementById("doc").textContent = JSON.stringify(doc, null, 1);
  result.replaceChildren(el("p", "deciding…"));
  const { status, json } = await call("POST", "/route", doc);
  result.replaceChildren();
  if (status === 401) {
    document.getElementById("token-label").hidden = false;
    tokenField.focus();
    result.append(el("p", "This server needs a bearer token to decide: enter it and decide again. It is kept in this page's memory only."));
    return;
  }
  if (!json || !json.disposition) {
    result.append(el("p", "Not a decision (" + status + "): " + ((json && json.detail) || "no detail")));
    return;
  }
  const line = el("p", json.disposition, "disposition " + json.disposition);
  line.id = "disposition";
  result.append(line);
  const facts = el("ul");
  const rule = el("li");
  rule.append("rule ", el("code", json.rule), " fired: " + (WHY[json.rule] || ""));
  rule.id = "rule";
  facts.append(rule);
  const attribution = el("li");
  attribution.append("attribution ", el("code", json.attribution));
  facts.append(attribution);
  facts.append(el("li", "exit code " + json.exit_code + ", HTTP " + status));
  facts.append(el("li", "decision id " + json.decision_id));
  result.append(facts);
  highlight(json.verdicts);
}

function init() {
  document.getElementById("origin").textContent = window.location.origin;
  const form = document.getElementById("decide");
  for (const g of GATES) {
    const select = form.elements[g];
    for (const w of [...WORDS, "(absent)"]) select.append(el("option", w));
  }
  form.addEventListener("submit", decide);
  renderTable();
  renderGateRules();
  initReview();
}

// ---------------------------------------------------------------------------------------------
// The review: files chosen or dropped are sent as they are to /review, /ladder/report or
// /calibrate, and drawn from the answers as inline SVG, each chart with its table.

const SVG = "http://www.w3.org/2000/svg";
// The default limit of a review body (`patchgate serve --report-body-limit`): a bigger file is
// refused here, before anything is read or sent.
const REVIEW_LIMIT = 64 * 1024 * 1024;
const KINDS = {
  log: { path: "/review", what: "a decision log" },
  ledger: { path: "/ladder/report", what: "a ladder ledger" },
  rows: { path: "/calibrate", what: "calibration rows" },
  answers: { path: "/review", what: "kept gate answers" },
};
// A disposition keeps its colour in every chart.
const DISPOSITION_CLASS = { MERGE_OK: "s3", BLOCK: "s1", ESCALATE: "s2", STOP_QUEUE: "s4" };

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function pct(v) {
  return v === null || v === undefined ? "-" : (v * 100).toFixed(1) + "%";
}

function num(v, digits) {
  return v === null || v === undefined ? "-" : Number(v).toFixed(digits);
}

// What a file is, from its first 64 KiB: the words its first record uses.
async function kindOf(file) {
  const head = await file.slice(0, 65536).text();
  const first = head.split("\n").find((l) => l.trim() !== "") || "";
  const array = first.trim().startsWith("[");
  if (/"target"\s*:\s*"patchgate::decision"/.test(head)) return { kind: "log", array };
  if (/"fix_changed"\s*:/.test(first) || (array && /"fix_changed"\s*:/.test(head))) return { kind: "rows", array };
  if (/"tier"\s*:/.test(head) && /"verdict"\s*:/.test(head)) return { kind: "ledger", array };
  return { kind: null, first: first.slice(0, 80) };
}

function say(text, cls) {
  const p = el("p", text, cls);
  document.getElementById("review-status").append(p);
  return p;
}

// A figure: its caption, the chart, a legend, and the table of its numbers.
function figure(id, caption, chart, legend, table) {
  const f = el("figure", undefined, "chart");
  f.id = id;
  f.append(el("figcaption", caption), chart);
  if (legend && legend.length) {
    const l = el("p", undefined, "legend");
    legend.forEach(([name, cls]) => {
      const s = el("span");
      s.append(el("i", undefined, cls), name);
      l.append(s);
    });
    f.append(l);
  }
  f.append(table);
  return f;
}

// A table: header cells, then rows of [text, raw value] cells.
function numbers(head, rows) {
  const t = el("table");
  const tr = el("tr");
  head.forEach((h) => tr.append(el("th", h)));
  t.append(el("thead"));
  t.tHead.append(tr);
  const body = el("tbody");
  for (const row of rows) {
    const r = el("tr");
    for (const [text, raw] of row) {
      const td = el("td", text);
      if (raw !== undefined) td.dataset.value = raw === null ? "null" : String(raw);
      r.append(td);
    }
    body.append(r);
  }
  t.append(body);
  return t;
}

const W = 720, H = 260, L = 52, R = 12, T = 14, B = 44;

// Axes for `labels` along x and 0..top along y; returns the scales.
function axes(root, labels, top, format) {
  const x = (i) => L + ((i + 0.5) * (W - L - R)) / Math.max(labels.length, 1);
  const y = (v) => H - B - (v / top) * (H - T - B);
  for (let k = 0; k <= 4; k++) {
    const v = (top * k) / 4;
    root.append(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
    root.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, format(v)));
  }
  root.append(svg("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), class: "axis" }));
  root.append(svg("line", { x1: L, x2: L, y1: T, y2: y(0), class: "axis" }));
  const step = Math.ceil(labels.length / 12);
  labels.forEach((label, i) => {
    if (i % step === 0) root.append(svg("text", { x: x(i), y: H - B + 16, "text-anchor": "middle" }, label));
  });
  return { x, y };
}

function frame(title) {
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  root.append(svg("title", {}, title));
  return root;
}

// Lines over labels; `limit` draws a dashed line at a value.
function lines(title, labels, series, opts) {
  const values = series.flatMap((s) => s.values).filter((v) => v !== null);
  const top = Math.max(opts.top || 0, ...values, opts.limit || 0) || 1;
  const root = frame(title);
  const { x, y } = axes(root, labels, top, opts.format);
  if (opts.limit !== undefined) {
    root.append(svg("line", { x1: L, x2: W - R, y1: y(opts.limit), y2: y(opts.limit), class: "limit" }));
    root.append(svg("text", { x: W - R, y: y(opts.limit) - 4, "text-anchor": "end" }, opts.limitLabel));
  }
  series.forEach((s, i) => {
    const points = s.values.map((v, j) => (v === null ? null : `${x(j)},${y(v)}`)).filter(Boolean);
    const cls = s.cls || `s${i % 8}`;
    if (points.length > 1) root.append(svg("polyline", { points: points.join(" "), class: `line ${cls}` }));
    s.values.forEach((v, j) => {
      if (v !== null) root.append(svg("circle", { cx: x(j), cy: y(v), r: 3, class: cls }));
    });
  });
  return root;
}

// Bars over labels: stacked, or side by side for one series.
function bars(title, labels, series, format) {
  const totals = labels.map((_, j) => series.reduce((a, s) => a + (s.values[j] || 0), 0));
  const top = Math.max(...totals, 0) || 1;
  const root = frame(title);
  const { x, y } = axes(root, labels, top, format);
  const band = ((W - L - R) / Math.max(labels.length, 1)) * 0.7;
  labels.forEach((_, j) => {
    let base = 0;
    series.forEach((s, i) => {
      const v = s.values[j] || 0;
      if (v > 0) {
        root.append(svg("rect", { x: x(j) - band / 2, width: band, y: y(base + v), height: y(base) - y(base + v), class: s.cls || `s${i % 8}` }));
      }
      base += v;
    });
  });
  return root;
}

function keysOf(weeks, field) {
  const keys = new Set();
  weeks.forEach((w) => Object.keys(w[field]).forEach((k) => keys.add(k)));
  return [...keys].sort();
}

function drawReview(name, r) {
  const out = [];
  const summary = el("p");
  summary.id = "review-summary";
  summary.textContent = `${name}: ${r.decisions} decisions; escalation rate ${pct(r.escalation_rate)}; escalated on inadmissible-evidence ${pct(r.inadmissible_share)}.` + (r.warning ? " Warning: " + r.warning : "");
  out.push(summary);
  const decided = r.by_week.filter((w) => w.decisions > 0);
  const labels = decided.map((w) => w.week);
  if (decided.length) {
    out.push(figure("chart-escalation", "Escalation rate per week",
      lines("Escalation rate per week", labels, [
        { values: decided.map((w) => w.escalation_rate) },
        { values: decided.map((w) => w.inadmissible_share) },
      ], { format: (v) => Math.round(v * 100) + "%", limit: 0.4, limitLabel: "40%: the freeze set is too broad", top: 0.5 }),
      [["escalation rate", "s0"], ["escalated on inadmissible-evidence", "s1"]],
      numbers(["week", "decisions", "escalation rate", "inadmissible-evidence"],
        decided.map((w) => [[w.week, w.week], [String(w.decisions), w.decisions], [pct(w.escalation_rate), w.escalation_rate], [pct(w.inadmissible_share), w.inadmissible_share]]))));
    for (const [field, id, caption] of [["by_disposition", "chart-dispositions", "Dispositions per week"], ["by_reason", "chart-attributions", "Attributions per week"]]) {
      const keys = keysOf(decided, field);
      const cls = (k, i) => (field === "by_disposition" && DISPOSITION_CLASS[k]) || `s${i % 8}`;
      const series = keys.map((k, i) => ({ values: decided.map((w) => w[field][k] || 0), cls: cls(k, i) }));
      out.push(figure(id, caption, bars(caption, labels, series, (v) => String(Math.round(v))),
        keys.map((k, i) => [k, cls(k, i)]),
        numbers(["week", ...keys], decided.map((w) => [[w.week, w.week], ...keys.map((k) => [String(w[field][k] || 0), w[field][k] || 0])]))));
    }
  }
  const debt = r.by_week.filter((w) => w.freeze_debt !== null && w.freeze_debt !== undefined);
  if (debt.length) {
    out.push(figure("chart-debt", "Freeze debt per week",
      lines("Freeze debt per week", debt.map((w) => w.week), [
        { values: debt.map((w) => w.freeze_debt) },
        { values: debt.map((w) => (w.debt_cap === null ? null : w.debt_cap)) },
      ], { format: (v) => String(Math.round(v * 10) / 10) }),
      [["freeze debt (the week's last decision)", "s0"], ["cap", "s1"]],
      numbers(["week", "freeze debt", "cap"], debt.map((w) => [[w.week, w.week], [String(w.freeze_debt), w.freeze_debt], [w.debt_cap === null ? "-" : String(w.debt_cap), w.debt_cap]]))));
  }
  return out;
}

function drawReport(name, r) {
  const tiers = r.tiers;
  const out = [];
  const drawn = tiers.filter((t) => t.yield_per_s !== null);
  out.push(figure("chart-yield", `Yield per tier (caught per second), ${name}: read as the ratio between tiers`,
    bars("Yield per tier", drawn.map((t) => t.tier), [{ values: drawn.map((t) => t.yield_per_s) }], (v) => v.toPrecision(2)),
    [],
    numbers(["tier", "runs", "caught", "errors", "total s", "caught per second"],
      tiers.map((t) => [[t.tier, t.tier], [String(t.runs), t.runs], [String(t.caught), t.caught], [String(t.errors), t.errors], [num(t.total_s, 1), t.total_s], [num(t.yield_per_s, 4), t.yield_per_s]]))));
  if (r.notes.length) {
    const ul = el("ul");
    r.notes.forEach((n) => ul.append(el("li", n)));
    out.push(ul);
  }
  return out;
}

function drawCalibration(name, classes) {
  const rated = classes.filter((c) => c.hit_rate !== null);
  return [figure("chart-calibration", `Calibration, ${name}: the share of fixes that landed where the class pointed`,
    bars("Hit rate per class", rated.map((c) => c.attribution), [{ values: rated.map((c) => c.hit_rate) }], (v) => Math.round(v * 100) + "%"),
    [],
    numbers(["attribution", "count", "production", "check", "both", "points to", "hit rate", "decisions"],
      classes.map((c) => [[c.attribution, c.attribution], [String(c.count), c.count], [pct(c.production), c.production], [pct(c.check), c.check], [pct(c.both), c.both], [c.points_to || "-", c.points_to], [pct(c.hit_rate), c.hit_rate], [(c.decision_ids || []).join(", ")]])))];
}

async function reviewFile(file) {
  if (file.size > REVIEW_LIMIT) {
    say(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB: over the 64 MiB a review body may have (the server's --report-body-limit); nothing was read or sent.`, "problem");
    return;
  }
  const { kind, array, first } = await kindOf(file);
  if (!kind) {
    say(`${file.name} is not a decision log, a ladder ledger or calibration rows: its first line is ${JSON.stringify(first)}.`, "problem");
    return;
  }
  await sendAndDraw(file.name, file, kind, array);
}

// Sends `body` (a File, or the answers gathered) to the endpoint of `kind` and draws the answer.
async function sendAndDraw(name, body, kind, array) {
  const k = KINDS[kind];
  const tokenField = document.getElementById("token");
  if (tokenField.value) token = tokenField.value;
  const pending = say(`${name}: sending it as ${k.what} to ${k.path}…`);
  const headers = { Accept: "application/json", "Content-Type": array ? "application/json" : "application/x-ndjson" };
  if (token) headers.Authorization = "Bearer " + token;
  let res, json = null;
  try {
    res = await fetch(k.path, { method: "POST", headers, body });
    json = await res.json();
  } catch (e) {
    pending.textContent = `${name}: no answer from ${k.path} (${e.message}).`;
    pending.className = "problem";
    return;
  }
  if (res.status === 401) {
    document.getElementById("token-label").hidden = false;
    pending.textContent = `${name}: this server needs a bearer token; enter it in the form above and choose the file again.`;
    pending.className = "problem";
    return;
  }
  if (res.status !== 200) {
    pending.textContent = `${name}: the server refused it as ${k.what} (${res.status}): ${(json && json.detail) || "no detail"}`;
    pending.className = "problem";
    return;
  }
  pending.textContent = `${name}: read as ${k.what} by ${k.path}.`;
  const charts = document.getElementById("charts");
  const drawn = kind === "ledger" ? drawReport(name, json) : kind === "rows" ? drawCalibration(name, json) : drawReview(name, json);
  const section = el("section");
  section.dataset.kind = kind;
  section.append(el("h3", `${name}: ${k.what}`), ...drawn);
  charts.append(section);
}


// A directory of kept gate answers: each `*.json` file, one answer per line, sent to /review
// as it is (each re-serialized on one line, nothing in it changed).
async function reviewAnswers(files) {
  document.getElementById("review-status").replaceChildren();
  document.getElementById("charts").replaceChildren();
  const answers = files.filter((f) => f.name.endsWith(".json"));
  const size = answers.reduce((a, f) => a + f.size, 0);
  if (!answers.length) {
    say(`no *.json file in the directory chosen (${files.length} files): choose the directory patchgate gate --json-out wrote into.`, "problem");
    return;
  }
  if (size > REVIEW_LIMIT) {
    say(`the ${answers.length} answers are ${(size / 1048576).toFixed(1)} MiB: over the 64 MiB a review body may have; nothing was read or sent.`, "problem");
    return;
  }
  const lines = [];
  const unread = [];
  for (const f of answers) {
    try {
      lines.push(JSON.stringify(JSON.parse(await f.text())));
    } catch (_) {
      unread.push(f.name);
    }
  }
  if (unread.length) say(`${unread.length} of the files are not JSON and were left out (first: ${unread[0]}).`, "problem");
  if (!lines.length) return;
  const name = `${lines.length} answers`;
  await sendAndDraw(name, new Blob([lines.join("\n") + "\n"]), "answers", false);
}

async function reviewFiles(files) {
  document.getElementById("review-status").replaceChildren();
  document.getElementById("charts").replaceChildren();
  for (const f of files) await reviewFile(f);
}

function initReview() {
  const answers = document.getElementById("review-answers");
  answers.addEventListener("change", () => {
    const files = [...answers.files];
    answers.value = "";
    reviewAnswers(files);
  });
  const input = document.getElementById("review-files");
  input.addEventListener("change", () => {
    const files = [...input.files];
    // Each choice stands alone: the next one does not add to it.
    input.value = "";
    reviewFiles(files);
  });
  const drop = document.getElementById("drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    reviewFiles([...e.dataTransfer.files]);
  });
}

document.addEventListener("DOMContentLoaded", init);
