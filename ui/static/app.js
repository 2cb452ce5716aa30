// The dashboard: polls api/stats every second, keeps a history and draws
// every panel from it. Rates and shares are differences between a
// process's newest summary and the one about WINDOW earlier.
"use strict";

const POLL_MS = 1000, WINDOW_NS = 3e9, HISTORY = 600;

const S = {
  topo: null, index: {}, hist: [], snaps: {}, inst: {}, rate: {}, last: null,
};

function key(s) {
  return s.operator + "#" + s.instance;
}

// indexTasks maps the names an instance may carry to a task id: the
// chain's name, its head's, any operator's.
function indexTasks(topo) {
  const idx = {};
  for (const t of topo.tasks) {
    idx[t.name] = t.id;
    for (const o of t.operators) if (!(o.name in idx)) idx[o.name] = t.id;
  }
  return idx;
}

function taskOf(name) {
  if (name in S.index) return S.index[name];
  const head = name.split("→")[0];
  return head in S.index ? S.index[head] : null;
}

// derive updates the rates per process and the per-instance deltas from
// the process's summaries of the last WINDOW.
function derive(st) {
  for (const p of st.processes) {
    if (!p.time) continue;
    const snaps = (S.snaps[p.process] = S.snaps[p.process] || []);
    if (snaps.length && snaps[snaps.length - 1].time >= p.time) continue;
    snaps.push(p);
    while (snaps.length > 2 && snaps[1].time <= p.time - WINDOW_NS) snaps.shift();
    const q = snaps[0];
    if (q === p) continue;
    const dt = (p.time - q.time) / 1e9;
    S.rate[p.process] = (p.records - q.records) / dt;
    const old = {}, oldKG = {};
    for (const s of q.instances || []) {
      old[key(s)] = s;
      // A key group's count is the records sent to it, whichever
      // instance owned it: after a rescale its new owner's rate is its
      // count less the old owner's.
      const m = (oldKG[s.operator] = oldKG[s.operator] || {});
      (s.key_groups || []).forEach((v, i) => (m[(s.key_group_lo || 0) + i] = v));
    }
    for (const s of p.instances || []) {
      const o = old[key(s)];
      if (!o) continue;
      const du = s.useful_ns - o.useful_ns, di = s.idle_ns - o.idle_ns, db = s.backpressure_ns - o.backpressure_ns;
      const tot = du + di + db;
      const was = oldKG[s.operator] || {}, lo = s.key_group_lo || 0;
      const kg = (s.key_groups || []).map((v, i) => (lo + i in was ? v - was[lo + i] : 0) / dt);
      S.inst[key(s)] = { du: du, db: db, tot: tot, busy: tot > 0 ? du / tot : null, bp: tot > 0 ? db / tot : null, rate: (s.records_in - o.records_in) / dt, kg: kg };
    }
  }
}

// operators sums the instances' figures per task of the topology.
function operators(st) {
  const ops = {};
  for (const p of st.processes) {
    for (const s of p.instances || []) {
      const id = taskOf(s.operator);
      if (id == null) continue;
      const o = (ops[id] = ops[id] || { records: 0, rate: null, du: 0, db: 0, tot: 0 });
      o.records += s.records_in;
      const d = S.inst[key(s)];
      if (!d) continue;
      o.rate = (o.rate || 0) + d.rate;
      o.du += d.du;
      o.db += d.db;
      o.tot += d.tot;
    }
  }
  for (const id in ops) {
    const o = ops[id];
    o.busy = o.tot > 0 ? o.du / o.tot : null;
    o.bp = o.tot > 0 ? o.db / o.tot : null;
  }
  return ops;
}

// summary is the job's figures of one poll.
function summary(st) {
  const live = st.processes.filter((p) => p.time > 0);
  const self = st.processes[st.self] || live[0] || { time: Date.now() * 1e6 };
  const withLat = live.filter((p) => p.latency && p.latency.count > 0);
  const worst = (f) => (withLat.length ? Math.max(...withLat.map((p) => p.latency[f])) / 1e6 : null);
  // A watermark at or before 1970 is none: no event time, or not reported.
  const lags = live.filter((p) => p.watermark > 0).map((p) => p.time / 1e6 - p.watermark);
  const rates = live.map((p) => S.rate[p.process]).filter((r) => r != null);
  return {
    t: self.time / 1e6, live: live.length, records: live.reduce((a, p) => a + p.records, 0),
    rate: rates.length ? rates.reduce((a, b) => a + b, 0) : null,
    epoch: live.length ? Math.min(...live.map((p) => p.epoch)) : null,
    p50: worst("p50_ns"), p90: worst("p90_ns"), p99: worst("p99_ns"), max: worst("max_ns"),
    lag: lags.length ? Math.max(...lags) : null,
  };
}

function setTile(id, value, shown) {
  const e = document.getElementById(id);
  e.dataset.value = value == null ? "" : value;
  e.textContent = shown;
}

function series(name, color, f) {
  return { name: name, color: color, pts: S.hist.filter((h) => h[f] != null).map((h) => [h.t, h[f]]) };
}

function render(st) {
  const sum = summary(st);
  if (S.hist.length == 0 || sum.t > S.hist[S.hist.length - 1].t) S.hist.push(sum);
  if (S.hist.length > HISTORY) S.hist.shift();
  document.getElementById("job-name").textContent = st.job + (st.processes.length > 1 ? " · page of process " + st.self : "");
  setTile("records", sum.records, fmtNum(sum.records));
  setTile("throughput", sum.rate, sum.rate == null ? "–" : fmtNum(sum.rate) + "/s");
  setTile("epoch", sum.epoch, sum.epoch == null ? "–" : String(sum.epoch));
  setTile("latency-p99", sum.p99, fmtMs(sum.p99));
  setTile("watermark-lag", sum.lag, fmtMs(sum.lag));
  setTile("processes", sum.live, sum.live + " of " + st.processes.length);
  const ops = operators(st);
  drawGraph(document.getElementById("graph"), S.topo, ops);
  lineChart(document.getElementById("chart-throughput"), [series("records/s", "#2f6fdf", "rate")], fmtNum);
  lineChart(document.getElementById("chart-latency"), [series("p50", "#2f6fdf", "p50"), series("p90", "#1b998b", "p90"),
    series("p99", "#f4a259", "p99"), series("max", "#d1495b", "max")], fmtMs, "no epoch has ended yet");
  lineChart(document.getElementById("chart-lag"), [series("lag", "#4b2e83", "lag")], fmtMs, "no watermark (the job has no event time, or none has passed yet)");
  drawHeatmap(document.getElementById("heatmap"), heatRows(st), S.topo ? S.topo.key_groups : 0);
  drawCheckpoints(document.getElementById("checkpoints"), document.getElementById("checkpoint-table"), st.processes);
  document.getElementById("bottleneck").textContent = bottleneck(st.critical, ops, S.topo);
  drawCP(document.getElementById("cp"), st.critical);
  fillInstances(document.getElementById("instances"), st.processes, S.inst);
  rescaleState(st, sum.epoch);
  const up = document.getElementById("updated");
  up.dataset.samples = S.hist.length;
  up.textContent = "updated " + fmtClock(sum.t) + " · " + S.hist.length + " samples";
}

function heatRows(st) {
  const rows = [];
  for (const p of st.processes) {
    for (const s of p.instances || []) {
      if (!s.key_groups || s.key_groups.length == 0) continue;
      const d = S.inst[key(s)];
      rows.push({ label: shorten(s.operator, 16) + " #" + s.instance + " · p" + s.process, lo: s.key_group_lo || 0, loads: d ? d.kg : s.key_groups.map(() => 0) });
    }
  }
  return rows;
}

async function getJSON(path, opts) {
  const r = await fetch(path, Object.assign({ cache: "no-store" }, opts || {}));
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()).trim());
  return r.json();
}

async function poll() {
  try {
    if (!S.topo) {
      S.topo = await getJSON("api/topology");
      S.index = indexTasks(S.topo);
    }
    const st = await getJSON("api/stats");
    derive(st);
    render(st);
    traceState(await getJSON("api/trace"));
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = "the job is not answering (" + e.message + "); figures are as last seen";
  }
  setTimeout(poll, POLL_MS);
}

function traceState(t) {
  const b = document.getElementById("trace-btn"), s = document.getElementById("trace-status");
  b.disabled = !t.available || t.tracing;
  b.dataset.tracing = t.tracing;
  s.textContent = !t.available ? "this job cannot record traces" : t.tracing ? "tracing…" : "tracing is off";
}

document.getElementById("trace-btn").addEventListener("click", async () => {
  try {
    traceState(await getJSON("api/trace?for=10s", { method: "POST" }));
  } catch (e) {
    document.getElementById("trace-status").textContent = e.message;
  }
});

poll();
