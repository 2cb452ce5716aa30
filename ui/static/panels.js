// The heat map of key-group loads, the checkpoint timeline, the
// critical-participation bars with their sentence, the instances table.
"use strict";

function heatColor(f) {
  if (!(f > 0)) return "#f3f5f8";
  const c0 = [255, 237, 213], c1 = [209, 73, 91];
  return "rgb(" + c0.map((c, k) => Math.round(c + (c1[k] - c) * Math.min(1, f))).join(",") + ")";
}

// drawHeatmap: rows are instances with key-group loads ({label, lo,
// loads}), columns the key groups 0..groups-1.
function drawHeatmap(svg, rows, groups) {
  clear(svg);
  const W = 1200, L = 150, R = 8, T = 16;
  if (rows.length == 0) {
    svg.setAttribute("viewBox", "0 0 " + W + " 40");
    text(svg, W / 2, 24, "no key-group loads yet (keyed instances report them)", { class: "empty", "text-anchor": "middle" });
    return;
  }
  groups = Math.max(groups, ...rows.map((r) => r.lo + r.loads.length));
  const cw = (W - L - R) / groups, ch = Math.max(6, Math.min(18, 240 / rows.length));
  const H = T + rows.length * ch + 4;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const max = Math.max(0, ...rows.flatMap((r) => r.loads)) || 1;
  for (let k = 0; k < groups; k += Math.max(1, Math.ceil(groups / 16))) {
    text(svg, L + k * cw, 11, String(k), { class: "tick" });
  }
  rows.forEach((r, i) => {
    const g = el("g", { class: "heat-row", "data-instance": r.label, "data-total": r.loads.reduce((a, b) => a + b, 0).toFixed(1) }, svg);
    const y = T + i * ch;
    if (ch >= 9) text(g, L - 6, y + ch - 2, r.label, { class: "tick", "text-anchor": "end" });
    r.loads.forEach((v, j) => {
      const c = el("rect", { x: L + (r.lo + j) * cw, y: y, width: Math.max(1, cw - 0.5), height: ch - 1, fill: heatColor(v / max) }, g);
      el("title", {}, c).textContent = `${r.label}, key group ${r.lo + j}: ${fmtNum(v)} records/s`;
    });
  });
}

// drawCheckpoints: a bar per checkpoint and process on a time axis, and
// a table of the newest, merged over processes.
function drawCheckpoints(svg, table, procs) {
  clear(svg);
  clear(table);
  const W = 1200, L = 80, R = 10, T = 8, RH = 18;
  const all = [];
  procs.forEach((p) => (p.checkpoints || []).forEach((c) => all.push(Object.assign({ process: p.process }, c))));
  if (all.length == 0) {
    svg.setAttribute("viewBox", `0 0 ${W} 40`);
    text(svg, W / 2, 24, "no checkpoints yet (a job with a checkpoint directory takes them)", { class: "empty", "text-anchor": "middle" });
    return;
  }
  const ids = [...new Set(all.map((c) => c.id))].sort((a, b) => a - b).slice(-20);
  const shown = all.filter((c) => ids.includes(c.id));
  const t0 = Math.min(...shown.map((c) => c.start)), t1 = Math.max(...shown.map((c) => c.start + c.duration_ns));
  const x = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
  const H = T + procs.length * RH + 18;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  procs.forEach((p, i) => text(svg, L - 8, T + i * RH + 13, "process " + p.process, { class: "tick", "text-anchor": "end" }));
  for (const c of shown) {
    const r = el("rect", { class: "ckpt", "data-id": c.id, x: x(c.start), y: T + c.process * RH + 2, width: Math.max(2, x(c.start + c.duration_ns) - x(c.start)), height: RH - 5, rx: 2, fill: c.complete ? "#2f6fdf" : "#c2c9d2" }, svg);
    el("title", {}, r).textContent = `checkpoint ${c.id} (epoch ${c.epoch}) on process ${c.process}: ${fmtMs(c.duration_ns / 1e6)}, ${fmtBytes(c.bytes)}`;
  }
  text(svg, L, H - 4, fmtClock(t0 / 1e6), { class: "tick" });
  text(svg, W - R, H - 4, fmtClock(t1 / 1e6), { class: "tick", "text-anchor": "end" });
  const head = table.insertRow();
  for (const h of ["checkpoint", "epoch", "started", "duration", "alignment", "size", "processes done"]) head.appendChild(document.createElement("th")).textContent = h;
  for (const id of ids.slice(-6).reverse()) {
    const cs = shown.filter((c) => c.id == id);
    const row = table.insertRow();
    row.dataset.id = id;
    const cells = [id, cs[0].epoch, fmtClock(Math.min(...cs.map((c) => c.start)) / 1e6), fmtMs(Math.max(...cs.map((c) => c.duration_ns)) / 1e6),
      fmtMs(Math.max(...cs.map((c) => c.alignment_ns)) / 1e6), fmtBytes(cs.reduce((a, c) => a + c.bytes, 0)), cs.filter((c) => c.complete).length + " of " + procs.length];
    for (const v of cells) row.insertCell().textContent = v;
  }
}

// drawCP draws the critical-participation rows as bars, CP next to busy
// share, the top rows of each group.
function drawCP(svg, rows) {
  clear(svg);
  const W = 700, L = 150, RH = 16;
  if (!rows || rows.length == 0) {
    svg.setAttribute("viewBox", `0 0 ${W} 40`);
    text(svg, W / 2, 24, "no critical-participation figures (tracing is off)", { class: "empty", "text-anchor": "middle" });
    return;
  }
  let y = 4;
  const bw = W - L - 60;
  const out = el("g", {}, svg);
  for (const grp of ["operator", "worker", "type", "pair"]) {
    const rs = rows.filter((r) => r.group == grp).sort((a, b) => b.cp - a.cp).slice(0, 5);
    if (rs.length == 0) continue;
    text(out, 0, y + 11, "by " + grp, { class: "tick", style: "font-weight:600" });
    y += 16;
    for (const r of rs) {
      const g = el("g", { class: "cp-row", "data-group": grp, "data-name": r.name, "data-cp": r.cp.toFixed(3), "data-busy": r.busy.toFixed(3) }, out);
      text(g, L - 6, y + 10, shorten(r.name, 24), { class: "tick", "text-anchor": "end" });
      el("rect", { x: L, y: y, width: bw * r.cp, height: 7, rx: 1, fill: "#d1495b" }, g);
      el("rect", { x: L, y: y + 8, width: bw * r.busy, height: 4, rx: 1, fill: "#9aa5b1" }, g);
      text(g, L + bw * Math.max(r.cp, r.busy) + 6, y + 10, fmtPct(r.cp) + " cp · " + fmtPct(r.busy) + " busy", { class: "tick" });
      y += RH;
    }
    y += 4;
  }
  svg.setAttribute("viewBox", `0 0 ${W} ${y}`);
}

// bottleneck names it in words: the top CP rows of the operator and
// worker groups, against what busy time alone would say; without CP, the
// busiest and the most backpressured operator.
function bottleneck(rows, ops, topo) {
  const top = (grp, f) => (rows || []).filter((r) => r.group == grp).sort((a, b) => f(b) - f(a))[0];
  const op = top("operator", (r) => r.cp), wk = top("worker", (r) => r.cp), busiest = top("operator", (r) => r.busy);
  if (op) {
    let s = `The bottleneck is ${op.name}: it lies on ${fmtPct(op.cp)} of the critical paths while busy ${fmtPct(op.busy)} of the time.`;
    if (busiest && busiest.name != op.name) s += ` Busy time alone would point at ${busiest.name} (busy ${fmtPct(busiest.busy)}, ${fmtPct(busiest.cp)} critical).`;
    if (wk) s += ` Worker ${wk.name} takes the largest share of the critical paths (${fmtPct(wk.cp)}; busy ${fmtPct(wk.busy)}).`;
    return s;
  }
  const tasks = (topo && topo.tasks) || [];
  const known = tasks.filter((t) => ops[t.id] && ops[t.id].busy != null);
  if (known.length == 0) return "No figures to name a bottleneck yet. Press “trace 10 s” to measure critical participation.";
  const b = known.reduce((a, t) => (ops[t.id].busy > ops[a.id].busy ? t : a));
  const p = known.reduce((a, t) => (ops[t.id].bp > ops[a.id].bp ? t : a));
  let s = `Without a trace, by busy time: ${b.name} is the busiest operator (busy ${fmtPct(ops[b.id].busy)}).`;
  if (ops[p.id].bp > 0.05) s += ` ${p.name} waits for output space ${fmtPct(ops[p.id].bp)} of the time (backpressured).`;
  return s + " Press “trace 10 s” for critical participation, which names the real bottleneck.";
}

// fillInstances writes one row per instance.
function fillInstances(table, procs, inst) {
  clear(table);
  const head = table.insertRow();
  for (const h of ["operator", "instance", "process", "state", "records in", "records out", "in/s", "busy", "backpressure", "queue", "epoch", "watermark"]) head.appendChild(document.createElement("th")).textContent = h;
  for (const p of procs) {
    for (const s of p.instances || []) {
      const d = inst[s.operator + "#" + s.instance] || {};
      const row = table.insertRow();
      row.dataset.operator = s.operator;
      row.dataset.instance = s.instance;
      // An instance of a keyed operator runs only while it owns key
      // groups; others run from start to end.
      row.dataset.running = s.running ? "1" : "0";
      const wm = s.watermark > 0 ? fmtClock(s.watermark) : "–";
      for (const v of [s.operator, s.instance, s.process, s.running ? "running" : "not running", fmtNum(s.records_in), fmtNum(s.records_out), fmtNum(d.rate), fmtPct(d.busy), fmtPct(d.bp), s.queue, s.epoch, wm]) row.insertCell().textContent = v;
    }
  }
  if (table.rows.length == 1) table.insertRow().insertCell().textContent = "no instance figures yet";
}
