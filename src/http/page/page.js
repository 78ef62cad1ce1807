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
}

document.addEventListener("DOMContentLoaded", init);
