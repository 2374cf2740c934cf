// optcomp budget planner page: plain JS, no external assets. The server validates and plans
// (POST /api/plan); this script keeps the form's state, debounces requests and draws the results.
"use strict";

const GLOBALS = ["epsilon", "delta", "beta", "reserve_epsilon", "gaussian_delta_share", "dataset_size"];
const KINDS = ["count", "sum", "mean", "histogram", "quantile"];
// A quantile is released by the exponential mechanism, and that mechanism releases quantiles only.
const SELECTION = "exponential";
let MECHANISMS = []; // [name, label] pairs, from GET /api/mechanisms (the server's one name table)
const MODE_NAMES = { basic: "basic", advanced: "advanced", kov: "KOV bound", optimal: "optimal", mechanism_aware: "mechanism-aware" };
const DEBOUNCE_MS = 250;

const state = { stats: [], timer: null, controller: null, last: null, seq: 0 };
const $ = (sel) => document.querySelector(sel);

function defaultStats() {
  return [
    { name: "population", kind: "count", mechanism: "discrete_laplace", lower: "", upper: "", q: "", bins: "", weight: "1", lock: "none", lockValue: "" },
    { name: "mean_age", kind: "mean", mechanism: "laplace", lower: "0", upper: "100", q: "", bins: "", weight: "2", lock: "none", lockValue: "" },
    { name: "age_groups", kind: "histogram", mechanism: "gaussian", lower: "", upper: "", q: "", bins: "10", weight: "1", lock: "none", lockValue: "" },
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
    // a quantile's candidates share the bins column (a count of public values, as bins are)
    if (s.kind === "quantile") { out.quantile = num(s.q); out.candidates = num(s.bins); }
    // A lock whose value is still blank is pending (not sent): choosing "lock" is not yet an error.
    if (s.lock === "epsilon" && !lockPending(s)) out.lock_epsilon = num(s.lockValue);
    if (s.lock === "accuracy" && !lockPending(s)) out.lock_accuracy = num(s.lockValue);
    return out;
  });
  return doc;
}

function lockPending(s) {
  return s.lock !== "none" && String(s.lockValue).trim() === "";
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
    q: s.quantile === undefined ? "" : String(s.quantile),
    bins: s.bins !== undefined ? String(s.bins) : s.candidates !== undefined ? String(s.candidates) : "", weight: String(s.weight === undefined ? 1 : s.weight),
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

// Name and bound fields as wide as the longest name/bound, so none is cut (style.css reads the variables).
function fitFields() {
  const longest = (keys) => Math.max(0, ...state.stats.flatMap((s) => keys.map((k) => String(s[k]).length)));
  const table = $("#stats");
  table.style.setProperty("--name-ch", String(longest(["name"]) + 1));
  table.style.setProperty("--bound-ch", String(longest(["lower", "upper"]) + 1));
}

function applyKind(tr, s) {
  const bounds = s.kind === "sum" || s.kind === "mean";
  tr.querySelector('[data-key="lower"]').disabled = !bounds;
  tr.querySelector('[data-key="upper"]').disabled = !bounds;
  tr.querySelector('[data-key="bins"]').disabled = s.kind !== "histogram" && s.kind !== "quantile";
  tr.querySelector('[data-key="bins"]').placeholder = s.kind === "quantile" ? "candidates" : "";
  tr.querySelector('[data-key="q"]').disabled = s.kind !== "quantile";
  const lockInput = tr.querySelector('[data-key="lockValue"]');
  lockInput.disabled = s.lock === "none";
  lockInput.placeholder = s.lock === "epsilon" ? "εᵢ =" : s.lock === "accuracy" ? "α ≤" : "";
  tr.classList.add("na");
}

function renderRows() {
  const body = $("#stats tbody");
  body.textContent = "";
  state.stats.forEach((s, i) => {
    const tr = el("tr", { class: "stat", "data-index": String(i) });
    // Each cell carries its column's name (data-label): the narrow layout shows it above the field.
    const cell = (key, label, child) => el("td", { class: "c-" + key, "data-label": label }, [child]);
    tr.appendChild(cell("name", "name", textInput("name", s.name, "name")));
    tr.appendChild(cell("kind", "kind", select("kind", s.kind, KINDS.map((k) => [k, k]))));
    tr.appendChild(cell("mechanism", "mechanism", select("mechanism", s.mechanism, MECHANISMS)));
    tr.appendChild(cell("lower", "lower", textInput("lower", s.lower)));
    tr.appendChild(cell("upper", "upper", textInput("upper", s.upper)));
    tr.appendChild(cell("q", "q", textInput("q", s.q)));
    tr.appendChild(cell("bins", "bins", textInput("bins", s.bins)));
    tr.appendChild(cell("weight", "weight", textInput("weight", s.weight)));
    tr.appendChild(cell("lock", "lock", select("lock", s.lock, [["none", "—"], ["epsilon", "ε"], ["accuracy", "accuracy α"]])));
    tr.appendChild(cell("lockValue", "lock value", textInput("lockValue", s.lockValue)));
    tr.appendChild(el("td", { class: "out eps", "data-label": "εᵢ" }));
    tr.appendChild(el("td", { class: "out acc", "data-label": "accuracy ±α" }));
    tr.appendChild(el("td", { class: "out gain", "data-label": "gain vs basic" }));
    const rm = el("button", { type: "button", class: "remove", title: "remove " + s.name, text: "✕" });
    rm.addEventListener("click", () => { state.stats.splice(i, 1); renderRows(); schedule(); });
    tr.appendChild(el("td", { class: "c-remove" }, [rm]));
    tr.addEventListener("input", (ev) => onRowInput(ev, s, tr));
    tr.addEventListener("change", (ev) => onRowInput(ev, s, tr));
    applyKind(tr, s);
    body.appendChild(tr);
    const msg = el("tr", { class: "msg", "data-index": String(i) }, [el("td", { colspan: "14" }, [el("span", { class: "error", role: "alert" })])]);
    msg.hidden = true;
    body.appendChild(msg);
  });
  fitFields();
  if (state.last) showResult(state.last);
}

function onRowInput(ev, s, tr) {
  const key = ev.target.getAttribute("data-key");
  if (!key) return;
  s[key] = ev.target.value;
  if (key === "name" || key === "lower" || key === "upper") fitFields();
  if (key === "lock" && ev.type === "change") {
    // A new lock starts blank (an ε and an α are in different units): wait for its value before re-planning
    // if nothing else changed, and put the cursor where it goes.
    s.lockValue = "";
    const input = tr.querySelector('[data-key="lockValue"]');
    input.value = "";
    applyKind(tr, s);
    if (s.lock !== "none") { input.classList.remove("invalid"); input.focus(); }
  } else if (key === "kind" || key === "mechanism") {
    // kind and mechanism follow each other across the quantile line (the server would refuse the mix)
    if (key === "kind" && (s.kind === "quantile") !== (s.mechanism === SELECTION)) s.mechanism = s.kind === "quantile" ? SELECTION : "laplace";
    if (key === "mechanism" && (s.kind === "quantile") !== (s.mechanism === SELECTION)) s.kind = s.mechanism === SELECTION ? "quantile" : "count";
    if (s.kind === "quantile" && String(s.q).trim() === "") s.q = "0.5";
    tr.querySelector('[data-key="mechanism"]').value = s.mechanism;
    tr.querySelector('[data-key="kind"]').value = s.kind;
    tr.querySelector('[data-key="q"]').value = s.q;
    applyKind(tr, s);
  }
  schedule();
}

function schedule() {
  clearTimeout(state.timer);
  // A request still in flight plans a form that has changed since: its answer must not be shown (nor say
  // "updated") while this change waits out the debounce, so it is dropped (replan checks seq).
  state.seq++;
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
  const pending = state.stats.filter(lockPending).map((s) => "'" + s.name + "'");
  $("#status").textContent = "updated in " + Math.round(performance.now() - t0) + " ms — all modes certified feasible" +
    (pending.length ? "; the lock on " + pending.join(", ") + " applies once its value is typed" : "");
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
  const keyOf = { lock_epsilon: "lockValue", lock_accuracy: "lockValue", quantile: "q", candidates: "bins" };
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
    const acc = tr.querySelector(".acc");
    acc.textContent = "±" + fmt(s.accuracy);
    if (s.kind === "histogram") acc.appendChild(el("span", { class: "all-bins", text: " (all bins ±" + fmt(s.accuracy_simultaneous) + ")" }));
    if (s.kind === "quantile") acc.appendChild(el("span", { class: "all-bins", text: " ranks" }));
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

// Text width in px of the chart's fonts (the SVG is drawn at 1:1, so these are the sizes on screen).
const CHART_FONT = { label: "13px system-ui, sans-serif", value: "11px system-ui, sans-serif" };
let measureCtx = null;
function textWidth(text, font) {
  measureCtx = measureCtx || document.createElement("canvas").getContext("2d");
  measureCtx.font = font;
  return Math.ceil(measureCtx.measureText(text).width);
}

// Horizontal bars per statistic: basic composition's α as the grey reference, the chosen mode's α in blue
// (length relative to basic, so statistics in different units share one chart). Drawn at the box's own
// width (no scaling, so labels keep their font size); names and values are cut only if longer than
// 40% of the width each, and the "(basic ±…)" note is dropped before the bars get shorter than 100 px.
function drawChart(m, basic, mode) {
  const box = $("#chart");
  box.textContent = "";
  if (!m || !basic) return;
  const NS = "http://www.w3.org/2000/svg";
  const rows = m.statistics.length;
  const W = Math.max(280, Math.floor(box.clientWidth || 660));
  const rowH = 30, top = 24;
  const H = top + rows * rowH + 6;
  const refs = m.statistics.map((s, i) => basic.statistics[i].accuracy);
  const unit = (s) => (s.kind === "quantile" ? " ranks" : "");
  const fullValue = (s, i) => "±" + fmt(s.accuracy) + unit(s) + (mode !== "basic" ? " (basic ±" + fmt(refs[i]) + ")" : "");
  const shortValue = (s) => "±" + fmt(s.accuracy) + unit(s);
  const maxW = (texts, font) => Math.max(0, ...texts.map((t) => textWidth(t, font)));
  const cut = Math.floor(0.4 * W);
  const left = Math.min(cut, maxW(m.statistics.map((s) => s.name), CHART_FONT.label) + 12);
  let value = fullValue;
  let right = maxW(m.statistics.map(fullValue), CHART_FONT.value) + 10;
  if (W - left - right < 100) { value = shortValue; right = maxW(m.statistics.map(shortValue), CHART_FONT.value) + 10; }
  right = Math.min(cut, right);
  const span = Math.max(40, W - left - right);
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("width", String(W));
  svg.setAttribute("height", String(H));
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.appendChild(e);
    return e;
  };
  const fit = (text, px, font) => {  // the longest prefix (+ "…") that fits in px
    if (textWidth(text, font) <= px) return text;
    let n = text.length;
    while (n > 1 && textWidth(text.slice(0, n) + "…", font) > px) n--;
    return text.slice(0, n) + "…";
  };
  const legendMode = MODE_NAMES[mode] + " (shorter = more accurate)";
  const basicW = 16 + textWidth("basic composition", CHART_FONT.value) + 14;
  const legendW = basicW + (mode !== "basic" ? 16 + textWidth(legendMode, CHART_FONT.value) : 0);
  const legendX = W - left >= legendW ? left : 0;  // over the bars if it fits there
  mk("rect", { x: legendX, y: 4, width: 12, height: 10, class: "bar-basic" });
  mk("text", { x: legendX + 16, y: 13, class: "value" }, "basic composition");
  if (mode !== "basic") {
    mk("rect", { x: legendX + basicW, y: 4, width: 12, height: 10, class: "bar-mode" });
    mk("text", { x: legendX + basicW + 16, y: 13, class: "value" }, legendMode);
  }
  m.statistics.forEach((s, i) => {
    const y = top + i * rowH;
    const ref = refs[i];
    const frac = typeof s.accuracy === "number" && typeof ref === "number" && ref > 0 ? Math.min(1, s.accuracy / ref) : 1;
    const label = mk("text", { x: left - 8, y: y + 17, "text-anchor": "end", class: "label" }, fit(s.name, left - 10, CHART_FONT.label));
    mk("title", {}, s.name);
    label.appendChild(svg.lastChild);
    mk("rect", { x: left, y: y + 3, width: span, height: 10, class: "bar-basic" });
    if (mode !== "basic") mk("rect", { x: left, y: y + 14, width: Math.max(1, span * frac), height: 10, class: "bar-mode" });
    mk("text", { x: left + span + 6, y: y + 17, class: "value" }, fit(value(s, i), right - 8, CHART_FONT.value));
  });
  box.appendChild(svg);
}

async function save() {
  const r = await post("/api/export", { plan: buildDoc() });
  if (!r.ok) { showError(await r.json()); fileMessage("not saved: the plan is invalid (see the highlighted field)", true); return; }
  const text = await r.text();
  const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "application/toml" })), download: "plan.toml" });
  document.body.appendChild(a);
  a.click();
  a.remove();
  fileMessage("saved plan.toml", false);
}

function fileMessage(text, isError) {
  const m = $("#file-message");
  m.textContent = text;
  m.classList.toggle("error", isError);
  m.setAttribute("role", isError ? "alert" : "status");
  $("label.file").classList.toggle("invalid", isError);
}

async function load(file) {
  const text = await file.text();
  const fmtName = file.name.toLowerCase().endsWith(".json") ? "json" : "toml";
  const r = await post("/api/import", { text: text, format: fmtName });
  const data = await r.json();
  // A file that does not load leaves the plan on the page as it is (valid, not greyed out): the message,
  // in the file bar, names the file, the statistic and the field.
  if (!data.ok) { fileMessage("not loaded: " + file.name + ": " + data.error + " (the plan on the page is unchanged)", true); return; }
  state.last = null;
  fromDoc(data.plan);
  fileMessage("loaded " + file.name, false);
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
  let resizeFrame = 0;  // the chart is drawn at the box's width: redraw when the window changes size
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resizeFrame);
    resizeFrame = requestAnimationFrame(() => { if (state.last) showResult(state.last); });
  });
  $("#add").addEventListener("click", () => {
    let k = state.stats.length + 1;
    while (state.stats.some((s) => s.name === "statistic_" + k)) k++;
    state.stats.push({ name: "statistic_" + k, kind: "count", mechanism: "laplace", lower: "0", upper: "1", q: "", bins: "10", weight: "1", lock: "none", lockValue: "" });
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
