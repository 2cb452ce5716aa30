package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/trace"
)

// stragglerTrace is a pipeline source → map ×3 → sink in periods of 100
// ms over 5 s. The source works 10 ms, sends a batch to each map and
// waits for credit: map#2, the straggler, works the whole period on the
// batch queued the period before (map#0 and map#1 work 50 ms and wait).
// The sink handles each map's output in 5 ms and waits otherwise.
func stragglerTrace() *trace.Trace {
	const ms = int64(1e6)
	t := &trace.Trace{Processes: 1, Base: 1e18, Ops: []string{"source", "map", "sink"},
		Workers: []trace.Worker{{Name: "source"}, {Name: "map", Op: 1}, {Name: "map", Instance: 1, Op: 1},
			{Name: "map", Instance: 2, Op: 1}, {Name: "sink", Op: 2}}}
	add := func(w uint32, k trace.Kind, op uint16, from, to int64, ch, seq uint64) {
		t.Events = append(t.Events, trace.Event{Worker: w, Kind: k, Op: op, Start: from, End: to, Channel: ch, Seq: seq})
	}
	for p := range int64(50) {
		at := t.Base + p*100*ms
		seq := uint64(p)
		add(0, trace.Processing, 0, at, at+10*ms, 0, 0)
		for m := range int64(3) {
			add(0, trace.Send, 0, at+(10+m)*ms, at+(11+m)*ms, uint64(1+m), seq)
		}
		add(0, trace.WaitCredit, 0, at+13*ms, at+100*ms, 0, 0)
		for m := range int64(2) {
			add(uint32(1+m), trace.WaitInput, 1, at, at+(13+m)*ms, 0, 0)
			add(uint32(1+m), trace.Recv, 1, at+(13+m)*ms, at+(14+m)*ms, uint64(1+m), seq)
			add(uint32(1+m), trace.Processing, 1, at+(14+m)*ms, at+(64+m)*ms, 0, 0)
			add(uint32(1+m), trace.Send, 1, at+(64+m)*ms, at+(65+m)*ms, uint64(4+m), seq)
			add(uint32(1+m), trace.WaitInput, 1, at+(65+m)*ms, at+100*ms, 0, 0)
		}
		// The straggler receives the batch sent the period before.
		if p > 0 {
			add(3, trace.Recv, 1, at, at+1*ms, 3, seq-1)
		} else {
			add(3, trace.WaitInput, 1, at, at+1*ms, 0, 0)
		}
		add(3, trace.Processing, 1, at+1*ms, at+99*ms, 0, 0)
		add(3, trace.Send, 1, at+99*ms, at+100*ms, 6, seq)
		// The sink: the straggler's output of the period before, then
		// map#0's and map#1's.
		add(4, trace.WaitInput, 2, at, at+1*ms, 0, 0)
		if p > 0 {
			add(4, trace.Recv, 2, at+1*ms, at+2*ms, 6, seq-1)
			add(4, trace.Processing, 2, at+2*ms, at+7*ms, 0, 0)
		} else {
			add(4, trace.WaitInput, 2, at+1*ms, at+7*ms, 0, 0)
		}
		add(4, trace.WaitInput, 2, at+7*ms, at+66*ms, 0, 0)
		add(4, trace.Recv, 2, at+66*ms, at+67*ms, 4, seq)
		add(4, trace.Processing, 2, at+67*ms, at+72*ms, 0, 0)
		add(4, trace.Recv, 2, at+72*ms, at+73*ms, 5, seq)
		add(4, trace.Processing, 2, at+73*ms, at+78*ms, 0, 0)
		add(4, trace.WaitInput, 2, at+78*ms, at+100*ms, 0, 0)
	}
	return t
}

func writeTrace(t *testing.T, path string, tr *trace.Trace) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWriter(f, tr.Process, max(1, tr.Processes), tr.Base)
	if err := w.Write(tr.Workers, tr.Ops, tr.Events); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTraceAnalyze(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "straggler.trace")
	writeTrace(t, file, stragglerTrace())
	chrome := filepath.Join(dir, "out.json")
	r := mustSucceed(t, "trace", "analyze", "--chrome", chrome, file)
	t.Logf("\n%s", r.stdout)
	for _, want := range []string{"by type", "by operator", "by worker", "by pair", "bottleneck: operator map carries",
		"worker map#2 carries"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	data, err := os.ReadFile(chrome)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ TraceEvents []map[string]any }
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.TraceEvents) < len(stragglerTrace().Events) {
		t.Errorf("--chrome: %v, %d events", err, len(doc.TraceEvents))
	}
	mustFail(t, []string{"trace", "analyze", "--window", "0s", file}, "--window 0s")
	mustFail(t, []string{"trace", "analyze", "--chrome", file, file}, "--chrome", "input")
	os.WriteFile(filepath.Join(dir, "bad"), []byte("WEIRTRC\x01\x00\x01\x00Q"), 0o644)
	mustFail(t, []string{"trace", "analyze", filepath.Join(dir, "bad")}, "offset 11", "unknown block tag")
}

// --trace FILE on a job command writes a trace file that weir trace
// analyze reads.
func TestTraceFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	os.WriteFile(in, []byte(strings.Repeat("a rose is a rose is a rose\n", 2000)), 0o644)
	file := filepath.Join(dir, "run.trace")
	mustSucceed(t, "run", "wordcount", "--input", in, "--out", filepath.Join(dir, "out.csv"), "--workers", "2", "--trace", file)
	if _, err := trace.ReadFile(file); err != nil {
		t.Fatalf("--trace file: %v", err)
	}
	mustSucceed(t, "trace", "analyze", file)
}
