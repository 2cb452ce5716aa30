package coord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

// serve carries out a coordinator's actions against a checkpoint store,
// answering each request at once, as the runtime service that owns a
// coordinator does after each event.
func serve(c *coord.Coordinator, st *checkpoint.Store, say func(string)) error {
	for c.HasReady() {
		actions := c.Ready()
		c.Advance()
		for _, a := range actions {
			if err := carry(c, st, a, say); err != nil {
				return err
			}
		}
	}
	return nil
}

func carry(c *coord.Coordinator, st *checkpoint.Store, a coord.Action, say func(string)) error {
	switch a := a.(type) {
	case coord.WritePart:
		err := st.WritePart(a.Part)
		ev := coord.PartWritten{N: a.Part.Checkpoint, Err: err}
		if err != nil {
			later, lerr := st.CompletedAfter(a.Part.Checkpoint)
			ev.Superseded = later && lerr == nil
		}
		return c.Step(ev)
	case coord.CheckComplete:
		ok, err := st.Complete(a.N, a.Processes)
		return c.Step(coord.CompleteChecked{N: a.N, Complete: ok, Err: err})
	case coord.CheckPart:
		ok, err := st.Has(a.N, a.Process)
		return c.Step(coord.PartChecked{N: a.N, Process: a.Process, Has: ok, Err: err})
	case coord.Completed:
		say(fmt.Sprintf("checkpoint %d complete", a.N))
	case coord.Commit:
		// The two-phase outputs would commit up to a.N here.
	case coord.Prune:
		return st.Prune(a.Keep)
	case coord.TrimIncomplete:
		return st.TrimIncomplete(a.Keep)
	case coord.WarnUnshared:
		say(fmt.Sprintf("processes %v wrote their parts of checkpoint %d, but %s does not hold them", a.Missing, a.Checkpoint, st.Dir()))
	}
	return nil
}

// Two processes of one task each share a checkpoint directory: each
// finds a checkpoint complete once it has written its part after the
// other did.
func Example() {
	fs := checkpoint.MemFS()
	var cs []*coord.Coordinator
	var stores []*checkpoint.Store
	for p := range 2 {
		c, err := coord.New(coord.Config{Self: p, Processes: 2, Every: 2, Keep: 1, KeyGroups: 4})
		if err != nil {
			panic(err)
		}
		st, err := checkpoint.Open(fs, "/ckpt", nil)
		if err != nil {
			panic(err)
		}
		if err := c.Step(coord.Join{Task: 0}); err != nil {
			panic(err)
		}
		cs, stores = append(cs, c), append(stores, st)
	}
	for _, n := range []uint64{2, 4} {
		for p, c := range cs {
			blob := checkpoint.StateBlob{Operator: "count", KeyGroup: uint32(p), Data: []byte(fmt.Sprint(n))}
			if err := c.Step(coord.Report{Task: 0, N: n, State: []checkpoint.StateBlob{blob}}); err != nil {
				panic(err)
			}
			say := func(s string) { fmt.Printf("process %d: %s\n", p, s) }
			if err := serve(c, stores[p], say); err != nil {
				panic(err)
			}
		}
	}
	n, _, _ := stores[0].Latest()
	parts, err := stores[0].ReadAll(n)
	fmt.Println("latest", n, "parts", len(parts), err)
	// Output:
	// process 1: checkpoint 2 complete
	// process 0: checkpoint 2 complete
	// process 1: checkpoint 4 complete
	// latest 4 parts 2 <nil>
}

// Over stores that are not shared, each process warns once that its
// directory lacks its peer's parts, and trims its incomplete checkpoints
// to Keep+1. The peers' summaries come every fourth checkpoint.
func TestRealStoresUnshared(t *testing.T) {
	const keep = 1
	var cs []*coord.Coordinator
	var stores []*checkpoint.Store
	said := make([][]string, 2)
	for p := range 2 {
		c, err := coord.New(coord.Config{Self: p, Processes: 2, Every: 1, Keep: keep, KeyGroups: 4})
		if err != nil {
			t.Fatal(err)
		}
		st, err := checkpoint.Open(checkpoint.MemFS(), "/ckpt", nil)
		if err != nil {
			t.Fatal(err)
		}
		mustStep(t, c, coord.Join{Task: 0})
		cs, stores = append(cs, c), append(stores, st)
	}
	for n := uint64(1); n <= 16; n++ {
		for p, c := range cs {
			if n%4 == 1 {
				mustStep(t, c, coord.PeerWrote{Process: 1 - p, N: cs[1-p].NewestWritten()})
			}
			mustStep(t, c, coord.Report{Task: 0, N: n, State: []checkpoint.StateBlob{{Operator: "count", KeyGroup: uint32(p)}}})
			if err := serve(c, stores[p], func(s string) { said[p] = append(said[p], s) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p := range 2 {
		if len(said[p]) != 1 || !strings.Contains(said[p][0], "does not hold them") {
			t.Errorf("process %d said %q; want one warning", p, said[p])
		}
		if n, err := stores[p].Count(); err != nil || n != keep+1 {
			t.Errorf("process %d's store holds %d checkpoints (%v); want %d", p, n, err, keep+1)
		}
	}
}

// A task's final state goes into every later part, so none of those parts
// may give its buffers back to the pool once written: the coordinator
// keeps it unmarked, and Recycle leaves it alone.
func TestFinalStateIsNotRecycled(t *testing.T) {
	c, err := coord.New(coord.Config{Self: 0, Processes: 1, Every: 1, Keep: 3, KeyGroups: 4})
	if err != nil {
		t.Fatal(err)
	}
	st, err := checkpoint.Open(checkpoint.MemFS(), "/ckpt", nil)
	if err != nil {
		t.Fatal(err)
	}
	for task := range 2 {
		if err := c.Step(coord.Join{Task: coord.TaskID(task)}); err != nil {
			t.Fatal(err)
		}
	}
	final := checkpoint.PooledBlob("count", 1, []byte(strings.Repeat("f", 64<<10)))
	if !final.Pooled {
		t.Fatal("a 64 KiB blob is not pooled")
	}
	if err := c.Step(coord.Finish{Task: 1, State: []checkpoint.StateBlob{final}}); err != nil {
		t.Fatal(err)
	}
	var written [][]checkpoint.StateBlob
	for n := uint64(1); n <= 3; n++ {
		if err := c.Step(coord.Report{Task: 0, N: n}); err != nil {
			t.Fatal(err)
		}
		for c.HasReady() {
			actions := c.Ready()
			c.Advance()
			for _, a := range actions {
				if err := carry(c, st, a, func(string) {}); err != nil {
					t.Fatal(err)
				}
				if w, ok := a.(coord.WritePart); ok {
					written = append(written, w.Part.State)
					checkpoint.Recycle(w.Part.State) // as the checkpoint service does once a part is written
				}
			}
		}
	}
	if len(written) != 3 {
		t.Fatalf("%d parts written, want 3", len(written))
	}
	for i, state := range written {
		if len(state) != 1 || state[0].Data == nil || string(state[0].Data) != string(final.Data) {
			t.Fatalf("part %d holds %d blobs; the final one is gone or changed", i+1, len(state))
		}
	}
}
