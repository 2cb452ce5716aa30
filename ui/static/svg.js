// SVG helpers, number formats and the line chart, shared by the panels.
"use strict";

const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function text(parent, x, y, s, attrs) {
  const t = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
  t.textContent = s;
  return t;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function fmtNum(v) {
  if (v == null || !isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 1 : 2) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 1 : 2) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
  if (a >= 100 || Number.isInteger(v)) return Math.round(v).toString();
  return v.toFixed(a >= 10 ? 1 : 2);
}

// fmtMs formats milliseconds.
function fmtMs(ms) {
  if (ms == null || !isFinite(ms)) return "–";
  if (ms == 0) return "0";
  const a = Math.abs(ms);
  if (a >= 3600e3) return (ms / 3600e3).toFixed(1) + " h";
  if (a >= 60e3) return (ms / 60e3).toFixed(1) + " min";
  if (a >= 1e3) return (ms / 1e3).toFixed(a >= 1e4 ? 1 : 2) + " s";
  if (a >= 10) return Math.round(ms) + " ms";
  return ms.toFixed(2) + " ms";
}

function fmtBytes(b) {
  if (b == null || !isFinite(b)) return "–";
  if (b >= 1 << 30) return (b / (1 << 30)).toFixed(1) + " GiB";
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(1) + " MiB";
  if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + " KiB";
  return b + " B";
}

function fmtPct(f) {
  return f == null || !isFinite(f) ? "–" : Math.round(f * 100) + " %";
}

function fmtClock(ms) {
  const d = new Date(ms);
  return d.toTimeString().slice(0, 8);
}

// niceTicks returns about n round values from 0 to at least max.
function niceTicks(max, n) {
  if (!(max > 0)) max = 1;
  const raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v <= max + step * 0.999; v += step) ticks.push(v);
  return ticks;
}

// lineChart draws series ({name, color, pts: [[time ms, value]]}) over
// time into svg (viewBox 560x190), with fmt for the y axis.
function lineChart(svg, series, fmt, emptyNote) {
  clear(svg);
  const W = 560, H = 190, L = 58, R = 12, T = 22, B = 22;
  const pts = series.flatMap((s) => s.pts);
  if (pts.length < 2) {
    text(svg, W / 2, H / 2, emptyNote || "waiting for figures…", { class: "empty", "text-anchor": "middle" });
    return;
  }
  const t0 = Math.min(...pts.map((p) => p[0])), t1 = Math.max(...pts.map((p) => p[0]));
  const ticks = niceTicks(Math.max(...pts.map((p) => p[1])), 4);
  const ymax = ticks[ticks.length - 1];
  const x = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
  const y = (v) => H - B - (v / ymax) * (H - T - B);
  for (const v of ticks) {
    el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }, svg);
    text(svg, L - 6, y(v) + 3, fmt(v), { class: "tick", "text-anchor": "end" });
  }
  for (let i = 0; i <= 3; i++) {
    const t = t0 + ((t1 - t0) * i) / 3;
    text(svg, x(t), H - 6, fmtClock(t), { class: "tick", "text-anchor": i == 0 ? "start" : i == 3 ? "end" : "middle" });
  }
  let lx = L + 4;
  for (const s of series) {
    if (s.pts.length == 0) continue;
    const d = s.pts.map((p, i) => (i ? "L" : "M") + x(p[0]).toFixed(1) + " " + y(p[1]).toFixed(1)).join("");
    el("path", { d: d, fill: "none", stroke: s.color, "stroke-width": 1.8, "stroke-linejoin": "round" }, svg);
    const last = s.pts[s.pts.length - 1][1];
    el("rect", { x: lx, y: 5, width: 10, height: 10, rx: 2, fill: s.color }, svg);
    const lt = text(svg, lx + 14, 14, s.name + " " + fmt(last), { class: "tick last", "data-series": s.name, "data-value": last });
    lx += 24 + lt.getComputedTextLength();
  }
}
