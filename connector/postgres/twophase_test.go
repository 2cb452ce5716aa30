package postgres_test

import (
	"testing"
)

// The two-phase steps called directly, as the engine calls them around
// checkpoints, restarts and the end of a job: staged rows stay out of
// the table until their checkpoint is committed, a commit applies once,
// a restart drops what came after its checkpoint.
func TestTwoPhaseSteps(t *testing.T) {
	d := newDB(t)
	table := d.table("weir_steps", kvColumns)
	s := kvSink(d.url, table)
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	prepare := func(n uint64, rows ...kv) {
		t.Helper()
		must("Write", s.Write(rows))
		_, err := s.Prepare(n)
		must("Prepare", err)
	}
	expect := func(when string, want map[string]int64) {
		t.Helper()
		if diff := sameCounts(d.counts("SELECT k, v FROM "+table), want); diff != "" {
			t.Fatalf("%s: table: %s", when, diff)
		}
	}

	must("Recover(0)", s.Recover(0))
	prepare(1, kv{"a", 1}, kv{"b", 1}, kv{"a", 2})
	prepare(2, kv{"c", 5})
	expect("after Prepare(1), Prepare(2)", map[string]int64{})
	if n := d.staged(table); n != 4 {
		t.Fatalf("after Prepare(1), Prepare(2): %d rows staged; want 4", n)
	}

	must("Commit(1)", s.Commit(1, nil))
	expect("after Commit(1)", map[string]int64{"a": 2, "b": 1})
	must("Commit(1) again", s.Commit(1, nil))
	expect("after Commit(1) twice", map[string]int64{"a": 2, "b": 1})
	must("Commit(2)", s.Commit(2, nil))
	must("Commit(2) again", s.Commit(2, nil))
	expect("after Commit(2) twice", map[string]int64{"a": 2, "b": 1, "c": 5})
	if f, n := d.fence(table), d.staged(table); f != 2 || n != 0 {
		t.Fatalf("after Commit(2): fence %d, %d rows staged; want 2 and 0", f, n)
	}

	// Checkpoint 4 is staged but never completes; the job restarts from 3
	// (the engine commits 3 again, then recovers) and writes 4 anew.
	prepare(3, kv{"a", 9})
	prepare(4, kv{"b", 7}, kv{"d", 4})
	must("Commit(3)", s.Commit(3, nil))
	must("Commit(3) again", s.Commit(3, nil))
	must("Recover(3)", s.Recover(3))
	if n := d.staged(table); n != 0 {
		t.Fatalf("after Recover(3): %d rows staged; want checkpoint 4's dropped", n)
	}
	must("Write", s.Write([]kv{{"e", 1}})) // written, not prepared, then the job restarts again
	must("Recover(3)", s.Recover(3))
	prepare(4, kv{"b", 8})
	must("Commit(4)", s.Commit(4, nil))
	expect("after the restart from 3", map[string]int64{"a": 9, "b": 8, "c": 5})

	// A commit of a checkpoint the fence has passed changes nothing, even
	// with other rows staged for it.
	prepare(4, kv{"a", 100}, kv{"z", 1})
	must("Commit(4) again", s.Commit(4, nil))
	expect("after Commit(4) of other rows", map[string]int64{"a": 9, "b": 8, "c": 5})
	if n := d.staged(table); n != 0 {
		t.Fatalf("after Commit(4) of other rows: %d rows staged; want them deleted", n)
	}

	// A restart from a checkpoint older than the fence takes the fence
	// back, so the rows written again reach the table.
	must("Recover(2)", s.Recover(2))
	if f := d.fence(table); f != 2 {
		t.Fatalf("after Recover(2): fence %d; want 2", f)
	}
	prepare(3, kv{"a", 50}, kv{"g", 1})
	prepare(4, kv{"g", 2})
	must("Commit(4)", s.Commit(4, nil)) // 3 and 4 at once: the later checkpoint's row wins
	expect("after the restart from 2", map[string]int64{"a": 50, "b": 8, "c": 5, "g": 2})

	// Close, at the end of the job, makes everything visible.
	prepare(5, kv{"c", 6})
	must("Write", s.Write([]kv{{"f", 2}, {"f", 3}}))
	must("Close", s.Close())
	final := map[string]int64{"a": 50, "b": 8, "c": 6, "f": 3, "g": 2}
	expect("after Close", final)
	if n := d.staged(table); n != 0 {
		t.Fatalf("after Close: %d rows staged; want 0", n)
	}
	// A commit arriving after Close changes nothing.
	must("Commit(5) after Close", s.Commit(5, nil))
	expect("after Commit(5) after Close", final)
}

// A second sink with another name writes the same table with its own
// fence and staging table, and Prepare and Commit of one checkpoint
// twice (as instances sharing the sink would) apply it once.
func TestTwoPhaseNamesAndRepeats(t *testing.T) {
	d := newDB(t)
	table := d.table("weir_names", kvColumns)
	other := table + "_other"
	t.Cleanup(func() { d.drop(other) })
	a := kvSink(d.url, table)
	b := kvSinkNamed(d.url, table, other)
	for _, s := range []interface{ Recover(uint64) error }{a, b} {
		if err := s.Recover(0); err != nil {
			t.Fatal(err)
		}
	}
	a.Write([]kv{{"x", 1}})
	b.Write([]kv{{"y", 2}})
	for range 2 {
		if _, err := a.Prepare(1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Prepare(5); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.Commit(1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.counts("SELECT k, v FROM " + table); sameCounts(got, map[string]int64{"x": 1}) != "" {
		t.Fatalf("after a's Commit(1): %v; want only a's row (b's checkpoint 5 is not committed)", got)
	}
	if err := b.Commit(5, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.counts("SELECT k, v FROM " + table); sameCounts(got, map[string]int64{"x": 1, "y": 2}) != "" {
		t.Fatalf("after b's Commit(5): %v; want both rows", got)
	}
	if fa, fb := d.fence(table), d.fence(other); fa != 1 || fb != 5 {
		t.Fatalf("fences %d and %d; want 1 and 5", fa, fb)
	}
	a.Close()
	b.Close()
}

// A connection the server closes between steps is opened again, and the
// step goes on.
func TestReconnect(t *testing.T) {
	d := newDB(t)
	table := d.table("weir_reconnect", kvColumns)
	kill := func(app string) {
		t.Helper()
		if n := d.count("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app); n != 1 {
			t.Fatalf("terminated %d connections of the sink; want 1", n)
		}
	}
	app := table + "_app"
	s := kvSink(d.url+"&application_name="+app, table)
	if err := s.Recover(0); err != nil {
		t.Fatal(err)
	}
	s.Write([]kv{{"a", 1}})
	kill(app)
	if _, err := s.Prepare(1); err != nil {
		t.Fatalf("Prepare after the connection was closed: %v", err)
	}
	kill(app)
	if err := s.Commit(1, nil); err != nil {
		t.Fatalf("Commit after the connection was closed: %v", err)
	}
	if diff := sameCounts(d.counts("SELECT k, v FROM "+table), map[string]int64{"a": 1}); diff != "" {
		t.Fatal(diff)
	}

	plainApp := table + "_plain_app"
	plain := kvSinkNamed(d.url+"&application_name="+plainApp, table, table+"_plain")
	t.Cleanup(func() { d.drop(table + "_plain") })
	plain.Write([]kv{{"b", 2}})
	if err := plain.EndEpoch(1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	plain.Write([]kv{{"b", 3}})
	kill(plainApp)
	if err := plain.EndEpoch(2); err != nil {
		t.Fatalf("EndEpoch after the connection was closed: %v", err)
	}
	if diff := sameCounts(d.counts("SELECT k, v FROM "+table), map[string]int64{"a": 1, "b": 3}); diff != "" {
		t.Fatal(diff)
	}
	plain.Close()
}
