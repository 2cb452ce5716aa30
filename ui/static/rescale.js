// The rescale control: posts {instances, strategy} to rescale (which calls
// Job.Rescale on the process serving the page, which announces it to the
// others) and shows the answer, then the migration's progress against the
// job's epoch, and how many instances own key groups (the heat map's rows
// show which).
"use strict";

const R = { answer: null, asked: 0, error: "" };

// owners is the most instances of one keyed operator that own key groups.
function owners(st) {
  const by = {};
  for (const p of st.processes) {
    for (const s of p.instances || []) {
      if (!s.key_groups || s.key_groups.length == 0) continue;
      (by[s.operator] = by[s.operator] || new Set()).add(s.instance);
    }
  }
  return Math.max(0, ...Object.values(by).map((s) => s.size));
}

// rescaleState shows the state of the last rescale asked from this page.
function rescaleState(st, epoch) {
  const el = document.getElementById("rescale-status"), n = document.getElementById("rescale-n");
  const own = owners(st);
  el.dataset.owners = own;
  if (n.value == "" && own > 0 && document.activeElement !== n) n.value = own;
  const over = own > 0 ? "key groups over " + own + " instances" : "";
  if (R.error) {
    el.dataset.state = "refused";
    el.className = "muted refused";
    el.textContent = R.error;
    return;
  }
  el.className = "muted";
  const a = R.answer;
  if (!a) {
    el.dataset.state = "idle";
    el.textContent = over;
    return;
  }
  const moves = a.moves + " key groups in " + a.steps + (a.steps == 1 ? " step" : " steps");
  const range = a.first == a.last ? "epoch " + a.first : "epochs " + a.first + "–" + a.last;
  if (epoch == null || epoch < a.first) {
    el.dataset.state = "announced";
    el.textContent = "to " + R.asked + ": " + moves + " at " + range + " · " + over;
  } else if (epoch < a.last) {
    el.dataset.state = "moving";
    el.textContent = "to " + R.asked + ": moving " + moves + ", epoch " + epoch + " of " + range + " · " + over;
  } else {
    el.dataset.state = "done";
    el.textContent = "to " + R.asked + ": moved " + moves + " by epoch " + a.last + " · " + over;
  }
}

document.getElementById("rescale-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const btn = document.getElementById("rescale-btn"), el = document.getElementById("rescale-status");
  const n = Number(document.getElementById("rescale-n").value);
  const body = { instances: n, strategy: document.getElementById("rescale-strategy").value };
  btn.disabled = true;
  el.dataset.state = "asking";
  el.textContent = "asking…";
  try {
    const r = await fetch("rescale", { method: "POST", cache: "no-store", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const text = (await r.text()).trim();
    if (!r.ok) {
      R.error = "refused (" + r.status + "): " + text.replace(/^weir: /, "");
    } else {
      R.answer = JSON.parse(text);
      R.asked = n;
      R.error = "";
    }
  } catch (e) {
    R.error = "the job is not answering (" + e.message + ")";
  }
  el.dataset.answer = R.error ? "" : JSON.stringify(R.answer);
  el.textContent = R.error || "announced";
  el.dataset.state = R.error ? "refused" : "announced";
  btn.disabled = false;
});
