package main

import (
	"testing"
)

// A small restart rescale prints one line with every field, a result
// equal to the reference's, and phases that fit together: the epochs
// before, during and after the move, the downtime among the latencies
// of the move, the migration no shorter than the downtime.
func TestBenchRescaleRestart(t *testing.T) {
	for _, c := range []struct{ query, from, to, procs string }{{"q8", "2", "4", "1"}, {"q4", "4", "2", "1"}, {"q8", "2", "4", "2"}} {
		r := mustSucceed(t, "bench", "rescale", "--strategy", "restart", "--query", c.query, "--from", c.from, "--to", c.to, "--processes", c.procs,
			"--rate", "4000", "--duration", "3s", "--at", "1500ms", "--state-mb", "2", "--interval", "50ms", "--checkpoint-every", "4")
		m := oneJSON(t, r.stdout)
		if m["strategy"] != "restart" || m["query"] != c.query || m["checked"] != true {
			t.Errorf("%v: strategy %v, query %v, checked %v; want restart, %s, true", c, m["strategy"], c.query, m["checked"], c.query)
		}
		lat, ok := m["latency_ms"].(map[string]any)
		if !ok {
			t.Fatalf("%v: latency_ms = %v; want an object", c, m["latency_ms"])
		}
		phase := map[string]map[string]any{}
		for _, p := range []string{"before", "during", "after"} {
			ph, ok := lat[p].(map[string]any)
			if !ok {
				t.Fatalf("%v: latency_ms.%s = %v; want an object", c, p, lat[p])
			}
			phase[p] = ph
			p50, p99, mx := number(t, ph, "p50"), number(t, ph, "p99"), number(t, ph, "max")
			if number(t, ph, "n") < 1 || !(0 <= p50 && p50 <= p99 && p99 <= mx) {
				t.Errorf("%v: latency_ms.%s = %v; want epochs and 0 ≤ p50 ≤ p99 ≤ max", c, p, ph)
			}
		}
		migration, downtime := number(t, m, "migration_s"), number(t, m, "downtime_s")
		if !(0 < downtime && downtime <= migration) {
			t.Errorf("%v: downtime_s %v, migration_s %v; want 0 < downtime ≤ migration", c, downtime, migration)
		}
		if mx := number(t, phase["during"], "max"); mx < downtime*1000*(1-1e-9) {
			t.Errorf("%v: during max %v ms is below the downtime %v s it holds", c, mx, downtime)
		}
		if number(t, m, "bytes_moved") <= 0 || number(t, m, "checkpoint") < 1 {
			t.Errorf("%v: bytes_moved %v, checkpoint %v; want a checkpoint read back", c, m["bytes_moved"], m["checkpoint"])
		}
		steady, peak, during := number(t, m, "steady_heap_bytes"), number(t, m, "peak_heap_bytes"), number(t, m, "peak_heap_during_bytes")
		if !(0 < steady && steady <= peak && 0 < during && during <= peak) {
			t.Errorf("%v: heap steady %v, during %v, peak %v; want positive and the peak the largest", c, steady, during, peak)
		}
	}
}

// A live rescale of 2 in-process processes (which once hung) prints its
// line with a result equal to the reference's, the steps it took and the
// state it moved.
func TestBenchRescaleLiveProcesses(t *testing.T) {
	r := mustSucceed(t, "bench", "rescale", "--processes", "2", "--per-pair", "8", "--rate", "4000", "--duration", "6s", "--at", "1500ms",
		"--state-mb", "2", "--interval", "50ms", "--checkpoint-every", "0")
	m := oneJSON(t, r.stdout)
	if m["strategy"] != "batched" || m["checked"] != true || number(t, m, "processes") != 2 {
		t.Errorf("strategy %v, checked %v, processes %v; want batched, true, 2", m["strategy"], m["checked"], m["processes"])
	}
	if number(t, m, "steps") < 1 || number(t, m, "bytes_moved") <= 0 {
		t.Errorf("steps %v, bytes_moved %v; want a move", m["steps"], m["bytes_moved"])
	}
}

// Process 1 of 2 leaves the running job at --at: its key groups and
// source shares move to process 0, and the result equals the reference's.
func TestBenchRescaleLeave(t *testing.T) {
	r := mustSucceed(t, "bench", "rescale", "--processes", "2", "--from", "4", "--leave", "1", "--rate", "4000", "--duration", "6s",
		"--at", "1500ms", "--state-mb", "2", "--interval", "50ms", "--checkpoint-every", "0")
	m := oneJSON(t, r.stdout)
	if m["checked"] != true || number(t, m, "leave") != 1 || number(t, m, "bytes_moved") <= 0 {
		t.Errorf("checked %v, leave %v, bytes_moved %v; want true, 1, some", m["checked"], m["leave"], m["bytes_moved"])
	}
}

// A process joins the running job of two at --at: the key groups and
// generator shares spread onto it, and the result equals the reference.
func TestBenchRescaleJoin(t *testing.T) {
	r := mustSucceed(t, "bench", "rescale", "--processes", "2", "--from", "4", "--join", "--rate", "4000", "--duration", "6s",
		"--at", "1500ms", "--state-mb", "2", "--interval", "50ms", "--checkpoint-every", "0")
	m := oneJSON(t, r.stdout)
	if m["checked"] != true || m["join"] != true || number(t, m, "to") != 6 || number(t, m, "bytes_moved") <= 0 {
		t.Errorf("checked %v, join %v, to %v, bytes_moved %v; want true, true, 6, some", m["checked"], m["join"], m["to"], m["bytes_moved"])
	}
}

// Settings that make no sense are refused.
func TestBenchRescaleRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "teleport"}, "--strategy"},
		{[]string{"--gap", "0"}, "--gap"},
		{[]string{"--per-pair", "0"}, "--per-pair"},
		{[]string{"--processes", "3"}, "--processes"},
		{[]string{"--processes", "0"}, "--processes"},
		{[]string{"--query", "q3"}, "--query"},
		{[]string{"--at", "20s"}, "--at"},
		{[]string{"--strategy", "restart", "--processes", "2", "--from", "2", "--to", "3"}, "--processes"},
		{[]string{"--from", "0"}, "--from"},
		{[]string{"--from", "2", "--to", "2"}, "--from"},
		{[]string{"--rate", "0"}, "--rate"},
		{[]string{"--state-mb", "-1"}, "--state-mb"},
		{[]string{"--checkpoint-every", "0", "--strategy", "restart"}, "--checkpoint-every"},
		{[]string{"--checkpoint-every", "-1"}, "--checkpoint-every"},
		{[]string{"--reuse", "--checkpoint-every", "0"}, "--reuse"},
		{[]string{"--reuse=false", "--strategy", "restart"}, "--reuse"},
		{[]string{"--leave", "1"}, "--leave 1"},
		{[]string{"--leave", "2", "--processes", "2"}, "--leave 2"},
		{[]string{"--leave", "1", "--processes", "2", "--to", "4"}, "--leave with --to"},
		{[]string{"--leave", "1", "--processes", "2", "--strategy", "restart"}, "--leave with --strategy restart"},
		{[]string{"--join", "--processes", "2", "--from", "4", "--to", "6"}, "--join with --to"},
		{[]string{"--join", "--strategy", "restart"}, "--join with --strategy restart"},
		{[]string{"--join", "--processes", "2", "--from", "3"}, "--from 3"},
		{[]string{"--join", "--leave", "1", "--processes", "2", "--from", "2"}, "--join with --leave"},
	} {
		mustFail(t, append([]string{"bench", "rescale"}, c.args...), c.want)
	}
}

// A small live rescale by each strategy, growing and shrinking, prints a
// line whose result equals the reference's, with its steps (one for
// all-at-once, one per key group moved for fluid, fewer than fluid's for
// batched), state handed over and every phase's latencies.
func TestBenchRescaleLive(t *testing.T) {
	for _, c := range []struct{ strategy, from, to string }{{"batched", "2", "4"}, {"fluid", "4", "2"}, {"all-at-once", "2", "4"}} {
		r := mustSucceed(t, "bench", "rescale", "--strategy", c.strategy, "--from", c.from, "--to", c.to,
			"--rate", "4000", "--duration", "6s", "--at", "1500ms", "--state-mb", "2", "--interval", "20ms", "--checkpoint-every", "0")
		m := oneJSON(t, r.stdout)
		if m["strategy"] != c.strategy || m["checked"] != true {
			t.Errorf("%v: strategy %v, checked %v; want %s, true", c, m["strategy"], m["checked"], c.strategy)
		}
		steps := number(t, m, "steps")
		// 128 key groups, contiguous over 2 and over 4: 96 change owner,
		// 64 of them from (or to) one instance, which batched hands over
		// one per step.
		want := map[string]func(float64) bool{
			"all-at-once": func(n float64) bool { return n == 1 },
			"fluid":       func(n float64) bool { return n == 96 },
			"batched":     func(n float64) bool { return n == 64 },
		}[c.strategy]
		if !want(steps) {
			t.Errorf("%v: %v steps", c, steps)
		}
		if number(t, m, "bytes_moved") <= 0 || number(t, m, "downtime_s") != 0 {
			t.Errorf("%v: bytes_moved %v, downtime_s %v; want state handed over and no downtime", c, m["bytes_moved"], m["downtime_s"])
		}
		lat := m["latency_ms"].(map[string]any)
		for _, p := range []string{"before", "during", "after"} {
			if ph, ok := lat[p].(map[string]any); !ok || number(t, ph, "n") < 1 {
				t.Errorf("%v: latency_ms.%s = %v; want epochs", c, p, lat[p])
			}
		}
	}
}

// A live rescale with checkpoints reuses them by default: its line says
// so, and the bytes moved are at most the whole; without reuse they are
// the whole, and so without checkpoints.
func TestBenchRescaleReuse(t *testing.T) {
	for _, c := range []struct {
		args  []string
		reuse bool
	}{{[]string{"--processes", "2"}, true}, {[]string{"--reuse=false"}, false}, {[]string{"--checkpoint-every", "0"}, false}} {
		r := mustSucceed(t, append([]string{"bench", "rescale", "--strategy", "all-at-once", "--rate", "4000", "--duration", "4s",
			"--at", "1500ms", "--state-mb", "2", "--interval", "50ms", "--checkpoint-every", "4"}, c.args...)...)
		m := oneJSON(t, r.stdout)
		moved, whole := number(t, m, "bytes_moved"), number(t, m, "bytes_whole")
		if m["checked"] != true || m["reuse"] != c.reuse || moved <= 0 || moved > whole || !c.reuse && moved != whole {
			t.Errorf("%v: checked %v, reuse %v, bytes_moved %v, bytes_whole %v; want true, %v, and at most the whole (the whole without reuse)",
				c.args, m["checked"], m["reuse"], moved, whole, c.reuse)
		}
	}
}
