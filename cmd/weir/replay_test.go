package main

import (
	"path/filepath"
	"testing"
	"time"
)

// --rate replays a file at a steady pace, with the same output.
func TestRunYSBFileRate(t *testing.T) {
	dir := t.TempDir()
	evs, camp := ysbInput(20_000, 11, 36_000)
	events, campaigns := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "campaigns.csv")
	writeLines(t, events, jsonLines(evs))
	writeCampaigns(t, campaigns, camp)
	want := ysbCSV(t, evs, camp)
	out := filepath.Join(dir, "out.csv")
	start := time.Now()
	mustSucceed(t, "run", "ysb", "--events", events, "--campaigns", campaigns, "--out", out, "--workers", "2", "--rate", "50000", "--interval", "20ms")
	if took := time.Since(start); took < 350*time.Millisecond {
		t.Errorf("20000 events at 50000/s took %v; want at least 0.4 s", took)
	}
	if got := readFile(t, out); got != want {
		t.Errorf("output differs from the reference\n%s", firstDiff(got, want))
	}
}
