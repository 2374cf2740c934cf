// optcomp budget planner page: plain JS, no external assets. The server validates and plans
// (POST /api/plan); this script keeps the form's state, debounces requests and draws the results.
"use strict";

const GLOBALS = ["epsilon", "delta", "beta", "reserve_epsilon", "gaussian_delta_share", "dataset_size"];
const KINDS = ["count", "sum", "mean", "histogram"];
let MECHANISMS = []; // [name, label] pairs, from GET /api/mechanisms (the server's one name table)
const MODE_NAMES = { basic: "basic", advanced: "advanced", kov: "KOV bound", optimal: "optimal", mechanism_aware: "mechanism-aware" };
const DEBOUNCE_MS = 250;

const state = { stats: [], timer: null, controller: null, last: null, seq: 0 };
const $ = (sel) => document.querySelector(sel);

function defaultStats() {
  return [
    { name: "population", kind: "count", mechanism: "discrete_laplace", lower: "", upper: "", bins: "", weight: "1", lock: "none", lockValue: "" },
    { name: "mean_age", kind: "mean", mechanism: "laplace", lower: "0", upper: "100", bins: "", weight: "2", lock: "none", lockValue: "" },
    { name: "age_groups", kind: "histogram", mechanism: "gaussian", lower: "", upper: "", bins: "10", weight: "1", lock: "none", lockValue: "" },
  ];
}

// A typed number if the text is one, else the text itself (the server then names the field and value).
function num(text) {
  const t = String(text).trim();
  if (t === "") return t;
  const x = Number(t);
  return Number.isFinite(x) ? x : t;
}

function buildDoc() {
  const doc = { version: 1 };
  for (const key of GLOBALS) {
    const v = $("#g-" + key).value;
    if (key === "dataset_size" && v.trim() === "") continue;
    doc[key] = num(v);
  }
  doc.neighbouring = $("#g-neighbouring").value;
  doc.dataset_size_public = $("#g-dataset_size_public").checked;
  doc.statistics = state.stats.map((s) => {
    const out = { name: s.name, kind: s.kind, mechanism: s.mechanism, weight: num(s.weight) };
    if (s.kind === "sum" || s.kind === "mean") { out.lower = num(s.lower); out.upper = num(s.upper); }
    if (s.kind === "histogram") out.bins = num(s.bins);
    if (s.lock === "epsilon") out.lock_epsilon = num(s.lockValue);
    if (s.lock === "accuracy") out.lock_accuracy = num(s.lockValue);
    return out;
  });
  return doc;
}

// Numbers as a person would type them (1e-6 rather than 0.000001).
function show(x) {
  if (typeof x !== "number") return String(x);
  return x !== 0 && Math.abs(x) < 1e-3 ? x.toExponential().replace("e+", "e") : String(x);
}

function fromDoc(doc) {
  for (const key of GLOBALS) $("#g-" + key).value = doc[key] === undefined ? (key === "reserve_epsilon" ? "0" : "") : show(doc[key]);
  $("#g-neighbouring").value = doc.neighbouring || "add_remove";
  $("#g-dataset_size_public").checked = doc.dataset_size_public !== false;
  state.stats = doc.statistics.map((s) => ({
    name: s.name, kind: s.kind, mechanism: s.mechanism || "laplace",
    lower: s.lower === undefined ? "" : String(s.lower), upper: s.upper === undefined ? "" : String(s.upper),
    bins: s.bins === undefined ? "" : String(s.bins), weight: String(s.weight === undefined ? 1 : s.weight),
    lock: s.lock_epsilon !== undefined ? "epsilon" : s.lock_accuracy !== undefined ? "accuracy" : "none",
    lockValue: s.lock_epsilon !== undefined ? show(s.lock_epsilon) : s.lock_accuracy !== undefined ? show(s.lock_accuracy) : "",
  }));
  renderRows();
}

function el(tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children || []) e.appendChild(c);
  return e;
}

function select(key, value, options) {
  const s = el("select", { "data-key": key });
  for (const [v, label] of options) {
    const o = el("option", { value: v, text: label });
    if (v === value) o.selected = true;
    s.appendChild(o);
  }
  return s;
}

function textInput(key, value, cls) {
  return el("input", { type: "text", "data-key": key, value: value, class: cls || "", inputmode: "decimal" });
}

function applyKind(tr, s) {
  const bounds = s.kind === "sum" || s.kind === "mean";
  tr.querySelector('[data-key="lower"]').disabled = !bounds;
  tr.querySelector('[data-key="upper"]').disabled = !bounds;
  tr.querySelector('[data-key="bins"]').disabled = s.kind !== "histogram";
  tr.querySelector('[data-key="lockValue"]').disabled = s.lock === "none";
  tr.classList.add("na");
}

function renderRows() {
  const body = $("#stats tbody");
  body.textContent = "";
  state.stats.forEach((s, i) => {
    const tr = el("tr", { class: "stat", "data-index": String(i) });
    tr.appendChild(el("td", {}, [textInput("name", s.name, "name")]));
    tr.appendChild(el("td", {}, [select("kind", s.kind, KINDS.map((k) => [k, k]))]));
    tr.appendChild(el("td", {}, [select("mechanism", s.mechanism, MECHANISMS)]));
    tr.appendChild(el("td", {}, [textInput("lower", s.lower)]));
    tr.appendChild(el("td", {}, [textInput("upper", s.upper)]));
    tr.appendChild(el("td", {}, [textInput("bins", s.bins)]));
    tr.appendChild(el("td", {}, [textInput("weight", s.weight)]));
    tr.appendChild(el("td", {}, [select("lock", s.lock, [["none", "—"], ["epsilon", "ε"], ["accuracy", "accuracy α"]])]));
    tr.appendChild(el("td", {}, [textInput("lockValue", s.lockValue)]));
    tr.appendChild(el("td", { class: "out eps" }));
    tr.appendChild(el("td", { class: "out acc" }));
    tr.appendChild(el("td", { class: "out gain" }));
    const rm = el("button", { type: "button", class: "remove", title: "remove", text: "✕" });
    rm.addEventListener("click", () => { state.stats.splice(i, 1); renderRows(); schedule(); });
    tr.appendChild(el("td", {}, [rm]));
    tr.addEventListener("input", (ev) => onRowInput(ev, s, tr));
    tr.addEventListener("change", (ev) => onRowInput(ev, s, tr));
    applyKind(tr, s);
    body.appendChild(tr);
    const msg = el("tr", { class: "msg", "data-index": String(i) }, [el("td", { colspan: "13" }, [el("span", { class: "error", role: "alert" })])]);
    msg.hidden = true;
    body.appendChild(msg);
  });
  if (state.last) showResult(state.last);
}

function onRowInput(ev, s, tr) {
  const key = ev.target.getAttribute("data-key");
  if (!key) return;
  s[key] = ev.target.value;
  if (key === "kind" || key === "lock") applyKind(tr, s);
  schedule();
}

function schedule() {
  clearTimeout(state.timer);
  $("#status").textContent = "planning…";
  state.timer = setTimeout(replan, DEBOUNCE_MS);
}

async function post(url, payload, signal) {
  const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload), signal });
  return r;
}

async function replan() {
  if (state.controller) state.controller.abort();
  const controller = new AbortController();
  state.controller = controller;
  const seq = ++state.seq;
  const t0 = performance.now();
  let data;
  try {
    const r = await post("/api/plan", { plan: buildDoc() }, controller.signal);
    data = await r.json();
  } catch (err) {
    if (err.name === "AbortError") return;
    showError({ error: "the planner server did not answer (" + err.message + ")", index: null, field: null });
    return;
  }
  if (seq !== state.seq) return;
  if (!data.ok) { showError(data); return; }
  clearErrors();
  state.last = data.result;
  showResult(data.result);
  $("#status").textContent = "updated in " + Math.round(performance.now() - t0) + " ms — all modes certified feasible";
}

function clearErrors() {
  document.querySelectorAll(".invalid").forEach((e) => e.classList.remove("invalid"));
  document.querySelectorAll("tr.msg").forEach((tr) => { tr.hidden = true; tr.querySelector(".error").textContent = ""; });
  const g = $("#global-error");
  g.hidden = true; g.textContent = "";
  document.body.classList.remove("has-error");
}

function showError(data) {
  clearErrors();
  document.body.classList.add("has-error");
  $("#status").textContent = "not planned: fix the highlighted field";
  const keyOf = { lock_epsilon: "lockValue", lock_accuracy: "lockValue" };
  if (data.index !== null && data.index !== undefined && data.index < state.stats.length) {
    const row = document.querySelector(`tr.stat[data-index="${data.index}"]`);
    const msg = document.querySelector(`tr.msg[data-index="${data.index}"]`);
    msg.hidden = false;
    msg.querySelector(".error").textContent = data.error;
    const key = keyOf[data.field] || data.field;
    const input = key && row.querySelector(`[data-key="${key}"]`);
    if (input) input.classList.add("invalid");
    return;
  }
  const g = $("#global-error");
  g.hidden = false;
  g.textContent = data.error;
  const input = data.field && document.querySelector(`#g-${data.field}`);
  if (input) input.classList.add("invalid");
}

function fmt(x) {
  if (x === "inf" || x === Infinity) return "∞";
  if (typeof x !== "number") return String(x);
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e6 || a < 1e-3) return x.toExponential(3).replace("e+", "e");
  return String(Number(x.toPrecision(4)));
}

function showResult(result) {
  const mode = $("#mode").value;
  const m = result.modes[mode];
  const basic = result.modes.basic;
  document.querySelectorAll("tr.stat").forEach((tr) => {
    const i = Number(tr.getAttribute("data-index"));
    const s = m && m.statistics[i];
    if (!s || s.name !== state.stats[i].name) return;
    tr.querySelector(".eps").textContent = fmt(s.epsilon);
    tr.querySelector(".acc").textContent = "±" + fmt(s.accuracy) + (s.kind === "histogram" ? " (all bins ±" + fmt(s.accuracy_simultaneous) + ")" : "");
    tr.querySelector(".gain").textContent = mode === "basic" ? "—" : "×" + fmt(s.gain_vs_basic);
  });
  const body = $("#modes tbody");
  body.textContent = "";
  for (const [name, r] of Object.entries(result.modes)) {
    const tr = el("tr", { class: name === mode ? "selected" : "" });
    for (const v of [MODE_NAMES[name], fmt(r.scale), fmt(r.epsilon_certified) + (r.feasible ? " ✓" : " ✗"), fmt(r.epsilon_budget), Math.round(r.seconds * 1000) + " ms"]) {
      tr.appendChild(el("td", { text: v }));
    }
    body.appendChild(tr);
  }
  drawChart(m, basic, mode);
}

// Horizontal bars per statistic: basic composition's α as the grey reference, the chosen mode's α in blue
// (length relative to basic, so statistics in different units share one chart).
function drawChart(m, basic, mode) {
  const box = $("#chart");
  box.textContent = "";
  if (!m || !basic) return;
  const NS = "http://www.w3.org/2000/svg";
  const rows = m.statistics.length;
  const W = 660, left = 170, right = 190, rowH = 30, top = 24;
  const H = top + rows * rowH + 6;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e);
    return e;
  };
  mk("rect", { x: left, y: 4, width: 12, height: 10, class: "bar-basic" });
  mk("text", { x: left + 16, y: 13, class: "value" }, "basic composition");
  if (mode !== "basic") {
    mk("rect", { x: left + 130, y: 4, width: 12, height: 10, class: "bar-mode" });
    mk("text", { x: left + 146, y: 13, class: "value" }, MODE_NAMES[mode] + " (shorter = more accurate)");
  }
  const span = W - left - right;
  m.statistics.forEach((s, i) => {
    const y = top + i * rowH;
    const ref = basic.statistics[i].accuracy;
    const frac = typeof s.accuracy === "number" && typeof ref === "number" && ref > 0 ? Math.min(1, s.accuracy / ref) : 1;
    mk("text", { x: left - 8, y: y + 17, "text-anchor": "end", class: "label" }, s.name.length > 19 ? s.name.slice(0, 18) + "…" : s.name);
    mk("rect", { x: left, y: y + 3, width: span, height: 10, class: "bar-basic" });
    if (mode !== "basic") mk("rect", { x: left, y: y + 14, width: Math.max(1, span * frac), height: 10, class: "bar-mode" });
    mk("text", { x: left + span + 6, y: y + 17, class: "value" }, "±" + fmt(s.accuracy) + (mode !== "basic" ? " (basic ±" + fmt(ref) + ")" : ""));
  });
  box.appendChild(svg);
}

async function save() {
  const r = await post("/api/export", { plan: buildDoc() });
  if (!r.ok) { showError(await r.json()); $("#file-message").textContent = "not saved: the plan is invalid"; return; }
  const text = await r.text();
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "application/toml" })), download: "plan.toml" });
  document.body.appendChild(a);
  a.click();
  a.remove();
  $("#file-message").textContent = "saved plan.toml";
}

async function load(file) {
  const text = await file.text();
  const fmtName = file.name.toLowerCase().endsWith(".json") ? "json" : "toml";
  const r = await post("/api/import", { text: text, format: fmtName });
  const data = await r.json();
  if (!data.ok) { showError(data); $("#file-message").textContent = "not loaded: " + data.error; return; }
  state.last = null;
  fromDoc(data.plan);
  $("#file-message").textContent = "loaded " + file.name;
  schedule();
}

// The mechanism menu's [name, label] pairs, as the server's name table lists them.
async function loadMechanisms() {
  const r = await fetch("/api/mechanisms");
  const data = await r.json();
  return data.mechanisms.map((m) => [m.name, m.label]);
}

async function init() {
  try {
    MECHANISMS = await loadMechanisms();
  } catch (err) {
    showError({ error: "the planner server did not list its mechanisms (" + err.message + ")", index: null, field: null });
    return;
  }
  for (const key of GLOBALS.concat(["neighbouring", "dataset_size_public"])) {
    const input = $("#g-" + key);
    input.addEventListener("input", schedule);
    input.addEventListener("change", schedule);
  }
  $("#mode").addEventListener("change", () => { if (state.last) showResult(state.last); });
  $("#add").addEventListener("click", () => {
    let k = state.stats.length + 1;
    while (state.stats.some((s) => s.name === "statistic_" + k)) k++;
    state.stats.push({ name: "statistic_" + k, kind: "count", mechanism: "laplace", lower: "0", upper: "1", bins: "10", weight: "1", lock: "none", lockValue: "" });
    renderRows();
    schedule();
  });
  $("#save").addEventListener("click", save);
  $("#load").addEventListener("change", (ev) => { if (ev.target.files.length) load(ev.target.files[0]); ev.target.value = ""; });
  state.stats = defaultStats();
  renderRows();
  schedule();
}

document.addEventListener("DOMContentLoaded", init);
