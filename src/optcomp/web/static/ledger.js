// The ledger page: GET /api/ledger (Ledger.report + Ledger.history) drawn as a bar, a chart and tables.
// Every number a person reads comes from the server's words (*_text fields, exact where exact); the
// floats here only place the bar's end and the chart's points. Nothing is fetched from another host.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#2f6fdb", "#1b9e77", "#d95f02", "#7570b3", "#e7298a"];
const TALL_TABLE = 25;  // releases beyond which the table scrolls inside its card

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}
function line(body, key, value) {
  const tr = el("tr"); tr.appendChild(el("td", {}, key)); tr.appendChild(el("td", {}, value)); body.appendChild(tr);
}
function pct(f) {  // a fraction as a percentage to 3 significant digits ("72.1 %", "100 %")
  if (f <= 0) return "0 %";
  const s = (f * 100).toPrecision(3);
  return (s.includes(".") && !s.includes("e") ? s.replace(/\.?0+$/, "") : String(Number(s))) + " %";
}
function amount(x) {  // an axis tick in the currency's units, to 4 significant digits ("0.02204", "1.5e-5")
  if (!(x > 0)) return "0";
  const [mant, exp] = (x >= 1e-4 && x < 1e5 ? x.toPrecision(4) : x.toExponential(3)).split("e");
  const m = mant.includes(".") ? mant.replace(/0+$/, "").replace(/\.$/, "") : mant;
  return exp === undefined ? m : `${m}e${Number(exp)}`;
}
function showError(text) { const e = document.getElementById("error"); e.textContent = text; e.hidden = false; }

function bar(fraction, text, what, amount, foot, id) {
  const row = el("div", {class: "bar-row"});
  const label = el("div", {class: "bar-label"});
  label.appendChild(el("span", {class: "what"}, what));
  label.appendChild(el("span", {class: "amount"}, amount));
  row.appendChild(label);
  const clamped = Math.max(0, Math.min(1, fraction));
  const state = text === "closed" ? " closed" : clamped >= 1 ? " full" : clamped >= 0.9 ? " warn" : "";
  const b = el("div", {class: "bar" + state, role: "img",
                      "data-fraction": String(fraction), "aria-label": `${what}: ${text}`});
  if (id) b.id = id;
  const spent = el("div", {class: "spent"});
  spent.style.width = (clamped * 100) + "%";
  b.appendChild(spent);
  b.appendChild(el("span", {class: "pct"}, text));
  row.appendChild(b);
  if (foot) row.appendChild(el("div", {class: "bar-foot"}, foot));
  return row;
}

function budget(r, n) {
  document.getElementById("dataset").textContent = "· " + r.dataset;
  const head = document.getElementById("headline");
  head.appendChild(el("b", {}, r.budget_text));
  head.appendChild(document.createTextNode(`  ·  ${r.currency_text}  ·  ${r.fraction_spent_text} spent`));
  const bars = document.getElementById("bars");
  if (r.mode === "filter") {
    const comps = r.components_text.filter(c => c.fraction !== null);
    const one = comps.length === 1 ? comps[0] : null;
    const amount = one ? one.amount_text : "";
    bars.appendChild(bar(r.fraction_spent, r.fraction_spent_text + " spent",
      one ? `spent in ${one.symbol}` : "budget spent (the branch that fits best)", amount,
      `the threshold certifies ${r.budget_text} for every run admitted under it; remaining: ${r.remaining_text}`,
      "bar"));
    if (!one) for (const c of comps)
      bars.appendChild(bar(c.fraction, c.open ? c.fraction_text + " spent" : "closed",
        c.open ? c.symbol : `${c.symbol} (its branch is closed: a non-pure release was charged)`,
        c.amount_text, null, null));
  } else {
    bars.appendChild(bar(r.fraction_spent, `${r.next_slot} of ${r.slots} slots used`, "plan slots used",
      `${r.next_slot} of ${r.slots}`, `the plan's certified composition is ${r.budget_text}; ${r.remaining_text}`,
      "bar"));
  }
  const s = document.querySelector("#summary tbody");
  line(s, "dataset", `${r.dataset} (${r.relation.replace("_", "/")} neighbours)`);
  line(s, "budget", `${r.budget_text}, ${r.currency_text}`);
  line(s, "spent", r.mode === "filter" ? `${r.fraction_spent_text} of the budget`
    : `${r.next_slot} of ${r.slots} slots (${r.fraction_spent_text})`);
  line(s, "remaining", r.remaining_text);
  line(s, "releases", `${n.charged} charged, ${n.released} released, ${n.voided} voided (refunded, not counted)`);
  line(s, "guarantee", r.guarantee);
}

function fits(r) {
  const ul = document.getElementById("fits");
  for (const f of r.what_fits) {
    const li = el("li");
    li.appendChild(el("span", {class: "what"}, f.what));
    li.appendChild(el("span", {class: "value"}, f.text));
    ul.appendChild(li);
  }
  if (!r.what_fits.length) ul.appendChild(el("li", {}, "Nothing more fits: the budget is spent."));
  document.getElementById("fits-note").textContent = r.mode === "filter"
    ? "Each is the ledger's own exact admission rule searched to adjacent floats, shown rounded on the safe " +
      "side (ε and ρ down, σ up): the value shown, charged next, fits. `optcomp ledger report --fits KIND:…` counts " +
      "how many more of any release fit."
    : "A release fits when a remaining slot dominates it (ε′ ≤ ε, δ′ ≤ δ; Δ′/σ′ ≤ Δ/σ).";
}

function chart(r, releases) {
  const box = document.getElementById("chart");
  box.textContent = "";
  const n = releases.length;
  const W = Math.max(320, box.clientWidth || 640), H = 260;
  const comps = r.mode === "filter" ? r.components_text.map((c, j) => ({...c, j})).filter(c => c.fraction !== null) : [];
  const one = comps.length === 1 ? comps[0] : null;  // one currency component: a second axis in its units
  const m = {l: 52, r: one ? 64 : 16, t: one ? 32 : 24, b: 38};
  const pw = W - m.l - m.r, ph = H - m.t - m.b;
  const top = Math.max(1, ...releases.map(x => x.fraction));
  const X = i => m.l + (n ? i / n : 0) * pw, Y = f => m.t + ph - (f / top) * ph;
  const root = svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": `cumulative budget spent over ${n} releases`});
  const keys = el("div", {class: "chart-legend"});  // HTML above the drawing: it wraps on a narrow window
  box.appendChild(keys);
  box.appendChild(root);
  const thr = one ? r.spent_float[one.j] + r.remaining_float[one.j] : 0;
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    root.appendChild(svg("line", {class: "grid", x1: m.l, x2: W - m.r, y1: Y(f * top), y2: Y(f * top)}));
    root.appendChild(svg("text", {class: "tick", x: m.l - 6, y: Y(f * top) + 4, "text-anchor": "end"}, pct(f * top)));
    if (one) root.appendChild(svg("text", {class: "tick unit", x: W - m.r + 6, y: Y(f * top) + 4},
      amount(f * top * thr)));
  }
  if (one) {
    root.appendChild(svg("line", {class: "axis", x1: W - m.r, x2: W - m.r, y1: m.t, y2: Y(0)}));
    root.appendChild(svg("text", {class: "tick unit", x: W - 4, y: 11, "text-anchor": "end"}, `${one.symbol} spent`));
  }
  root.appendChild(svg("line", {class: "axis", x1: m.l, x2: W - m.r, y1: Y(0), y2: Y(0)}));
  root.appendChild(svg("line", {class: "axis", x1: m.l, x2: m.l, y1: m.t, y2: Y(0)}));
  root.appendChild(svg("line", {class: "threshold", x1: m.l, x2: W - m.r, y1: Y(1), y2: Y(1)}));
  const what = comps.length === 1 ? `threshold ${comps[0].symbol} ${comps[0].threshold_text.startsWith("≈") ? "≈ " +
    comps[0].threshold_text.slice(1) : "= " + comps[0].threshold_text}: certifies ${r.budget_text}`
    : r.mode === "filter" ? `budget: ${r.budget_text}` : `all ${r.slots} slots: ${r.budget_text}`;
  root.appendChild(svg("text", {class: "threshold-label", x: W - m.r - 4, y: Y(1) - 6, "text-anchor": "end"}, what));
  const step = Math.max(1, Math.ceil(n / 12));  // a tick every step releases, the last one always
  for (let i = 1; i <= n; i++) if ((i % step === 0 && n - i >= step / 2) || i === 1 || i === n)
    root.appendChild(svg("text", {class: "tick", x: X(i), y: Y(0) + 16, "text-anchor": "middle"}, String(i)));
  root.appendChild(svg("text", {class: "tick", x: m.l + pw / 2, y: H - 4, "text-anchor": "middle"},
    "releases in charge order" + (W > 560 ? " (a voided one adds nothing: refunded)" : "")));
  const legend = (text, colour, dash) => {  // a swatch of the series' line, then its name
    const key = el("span", {class: "key"});
    const swatch = el("i", {class: "swatch" + (dash ? " dashed" : "")});
    swatch.style.borderTopColor = colour;
    key.appendChild(swatch);
    key.appendChild(document.createTextNode(text));
    keys.appendChild(key);
  };
  legend(comps.length > 1 ? "budget spent (the branch that fits best)"
    : comps.length ? `${comps[0].symbol} spent` : "slots used", COLOURS[0], null);
  if (comps.length > 1) comps.forEach((c, k) => {  // one thin line per component, against its own threshold
    const t = r.spent_float[c.j] + r.remaining_float[c.j];
    const pts = [[X(0), Y(0)], ...releases.map((x, i) => [X(i + 1), Y(x.cumulative[c.j] / t)])];
    root.appendChild(svg("polyline", {class: "series thin", stroke: COLOURS[(k + 1) % COLOURS.length],
      "stroke-dasharray": "4 3", points: pts.map(p => p.join(",")).join(" ")}));
    legend(c.symbol, COLOURS[(k + 1) % COLOURS.length], "4 3");
  });
  const main = [[X(0), Y(0)], ...releases.map((x, i) => [X(i + 1), Y(x.fraction)])];
  root.appendChild(svg("polyline", {class: "series", stroke: COLOURS[0], points: main.map(p => p.join(",")).join(" ")}));
  const radius = n > 200 ? 1.8 : n > 60 ? 2.5 : 4;
  releases.forEach((x, i) => {
    const c = svg("circle", {class: "pt " + x.status, cx: X(i + 1), cy: Y(x.fraction), r: radius,
      fill: x.status === "voided" ? "#fff" : COLOURS[0], stroke: x.status === "voided" ? "#8a939e" : "#fff",
      "data-fraction": String(x.fraction), "data-release": x.release_id});
    c.appendChild(svg("title", {}, `#${i + 1} ${x.release_id} (${x.status}): ${x.release_text}, ${x.charge_text}` +
      `; after it ${x.fraction_text} of the budget is spent`));
    root.appendChild(c);
  });
  document.getElementById("chart-note").textContent = n ? `${n} release${n === 1 ? "" : "s"}; the dashed red ` +
    "line is the budget's threshold (100 %). Hover a point for its release." : "No release charged yet.";
}

function tables(r, releases) {
  const b = document.querySelector("#releases tbody");
  releases.forEach((t, i) => {
    const tr = el("tr", {class: t.status, title: `event ${t.seq} of the hash chain`});
    tr.appendChild(el("td", {}, String(i + 1)));
    tr.appendChild(el("td", {class: "rid"}, t.release_id));
    const st = el("td"); st.appendChild(el("span", {class: "status " + t.status}, t.status)); tr.appendChild(st);
    tr.appendChild(el("td", {class: "when"}, t.time_text.replace(" UTC", "")));
    const what = el("td", {class: "release"}, t.release_text);
    if (t.note && t.status === "voided") what.appendChild(el("span", {class: "note"}, "voided: " + t.note));
    tr.appendChild(what);
    const charge = el("td", {class: "amount"}, t.charge_text);
    if (t.status === "voided") charge.appendChild(el("span", {class: "note"}, "refunded"));
    tr.appendChild(charge);
    b.appendChild(tr);
  });
  b.closest(".scroll").classList.toggle("tall", releases.length > TALL_TABLE);
  document.getElementById("releases-note").textContent = releases.length > TALL_TABLE
    ? `${releases.length} releases (scroll the table; all of them with their hash chain: optcomp ledger export)`
    : releases.length ? "" : "No release charged yet.";
  const rf = r.refused, body = document.querySelector("#refused tbody");
  for (const x of rf.recent) {
    const tr = el("tr");
    tr.appendChild(el("td", {class: "rid"}, x.release_id));
    tr.appendChild(el("td", {class: "when"}, x.time_text.replace(" UTC", "")));
    tr.appendChild(el("td", {class: "release"}, x.release_text));
    tr.appendChild(el("td", {}, x.reason));
    body.appendChild(tr);
  }
  document.getElementById("refused").hidden = !rf.count;
  document.getElementById("refused-note").textContent = rf.count
    ? `${rf.count} refused attempt${rf.count === 1 ? "" : "s"}` + (rf.count > rf.recent.length
      ? ` (the latest ${rf.recent.length} below; all of them: optcomp ledger export)` : "") + `: ${rf.note}.`
    : "No refused attempts.";
}

fetch("/api/ledger").then(r => r.json()).then(data => {
  if (!data.ok) { showError(data.error); document.body.classList.add("no-ledger"); return; }
  const r = data.report;
  if (r.problems && r.problems.length)  // figures are replayed from the hash chain; the cache, index or chain failed
    showError("This ledger fails its checks: " + r.problems.join("; ") + " (run `optcomp ledger verify`).");
  budget(r, r.releases);
  fits(r);
  tables(r, data.releases);
  chart(r, data.releases);
  let width = window.innerWidth;
  window.addEventListener("resize", () => { if (window.innerWidth !== width) { width = window.innerWidth; chart(r, data.releases); } });
  document.body.dataset.ready = "1";
}).catch(err => showError("The ledger could not be read: " + err));
