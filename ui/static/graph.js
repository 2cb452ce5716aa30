// The job graph: tasks as boxes in topological layers, coloured by busy
// share, with a bar for the backpressured share, and the exchanges.
"use strict";

const BOX_W = 250, BOX_H = 74, COL_W = 370, ROW_H = 92, PAD = 14;

// busyColor goes from light blue (idle) through amber to red (busy).
function busyColor(b) {
  if (b == null || !isFinite(b)) return "#eef1f5";
  const stops = [[0, [219, 233, 246]], [0.5, [246, 194, 107]], [1, [209, 73, 91]]];
  b = Math.max(0, Math.min(1, b));
  const i = b <= 0.5 ? 0 : 1, [f0, c0] = stops[i], [f1, c1] = stops[i + 1];
  const u = (b - f0) / (f1 - f0);
  return "rgb(" + c0.map((c, k) => Math.round(c + (c1[k] - c) * u)).join(",") + ")";
}

// layout places each task: column by layer, rows in order of id.
function layout(topo) {
  const pos = {}, rows = {};
  let cols = 0, maxRows = 0;
  for (const t of topo.tasks) {
    const r = rows[t.layer] || 0;
    rows[t.layer] = r + 1;
    pos[t.id] = { x: PAD + t.layer * COL_W, y: PAD + r * ROW_H };
    cols = Math.max(cols, t.layer + 1);
    maxRows = Math.max(maxRows, r + 1);
  }
  // Centre short columns against the tallest.
  const height = PAD * 2 + maxRows * ROW_H - (ROW_H - BOX_H);
  for (const t of topo.tasks) {
    const n = rows[t.layer];
    pos[t.id].y += ((maxRows - n) * ROW_H) / 2;
  }
  return { pos: pos, width: PAD * 2 + (cols - 1) * COL_W + BOX_W, height: height };
}

function shorten(s, n) {
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}

// drawGraph draws topo with the figures per task id in ops ({busy, bp,
// rate, records, instances}).
function drawGraph(svg, topo, ops) {
  clear(svg);
  if (!topo || !topo.tasks || topo.tasks.length == 0) {
    svg.setAttribute("viewBox", "0 0 600 60");
    text(svg, 300, 34, "no graph", { class: "empty", "text-anchor": "middle" });
    return;
  }
  const lay = layout(topo);
  svg.setAttribute("viewBox", "0 0 " + Math.max(lay.width, 600) + " " + lay.height);
  svg.style.maxHeight = lay.height + "px";
  for (const e of topo.edges) drawEdge(svg, lay.pos[e.from], lay.pos[e.to], e.exchange);
  for (const t of topo.tasks) drawNode(svg, t, lay.pos[t.id], ops[t.id] || {});
}

function drawEdge(svg, a, b, label) {
  const g = el("g", { class: "edge", "data-exchange": label }, svg);
  const x1 = a.x + BOX_W, y1 = a.y + BOX_H / 2, x2 = b.x, y2 = b.y + BOX_H / 2, mx = (x1 + x2) / 2;
  el("path", { d: `M${x1} ${y1} C${mx} ${y1} ${mx} ${y2} ${x2 - 6} ${y2}` }, g);
  el("path", { d: `M${x2 - 7} ${y2 - 4} L${x2} ${y2} L${x2 - 7} ${y2 + 4}`, style: "fill:#9aa5b1;stroke:none" }, g);
  text(g, mx, (y1 + y2) / 2 - 5, label, { "text-anchor": "middle" });
}

function drawNode(svg, t, p, f) {
  const g = el("g", {
    class: "node", "data-task": t.name, "data-id": t.id, "data-parallelism": t.parallelism,
    "data-busy": f.busy == null ? "" : f.busy.toFixed(3), "data-backpressure": f.bp == null ? "" : f.bp.toFixed(3),
    "data-records": f.records == null ? "" : f.records, "data-rate": f.rate == null ? "" : f.rate.toFixed(1),
    transform: `translate(${p.x},${p.y})`,
  }, svg);
  el("title", {}, g).textContent = t.operators.map((o) => o.name + " (" + o.op + ")").join(" → ");
  el("rect", { class: "box", width: BOX_W, height: BOX_H, rx: 6, fill: busyColor(f.busy) }, g);
  if (f.bp > 0) el("rect", { class: "bp", x: 1, y: BOX_H - 5, width: (BOX_W - 2) * Math.min(1, f.bp), height: 4, rx: 1, fill: "#4b2e83" }, g);
  text(g, 10, 18, shorten(t.name, 36), { class: "name" });
  text(g, 10, 34, "×" + t.parallelism + " · " + t.kind + (t.keyed ? " · keyed" : ""));
  const busy = f.busy == null ? "busy –" : "busy " + fmtPct(f.busy) + " · bp " + fmtPct(f.bp);
  text(g, 10, 49, busy, { class: "busy" });
  const rec = f.records == null ? "no records yet" : fmtNum(f.records) + " in" + (f.rate == null ? "" : " · " + fmtNum(f.rate) + "/s");
  text(g, 10, 63, rec, { class: "records" });
}
