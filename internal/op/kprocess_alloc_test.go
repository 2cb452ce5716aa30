//go:build !race

package op

import (
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
)

// KeyedProcess's per-record path allocates nothing when its function
// does not: state, a timer registered again, an output and a side output
// per record.
func TestAllocsKeyedProcess(t *testing.T) {
	side := NewSideOutput[int64]("side")
	f := ProcessFunc[string, allocRec, int64, allocRec]{
		OnRecord: func(c *ProcessContext[string, int64, allocRec], r allocRec) {
			*c.State() += r.Val
			c.RegisterEventTimer(c.Timestamp()/1000*1000 + 999)
			c.Emit(r)
			side.Emit(c, r.Val)
		},
		OnTimer: func(*ProcessContext[string, int64, allocRec], Timer) {},
		Sides:   []SideTag{side},
	}
	hs := newHarness(t, f, hopts{sides: map[string]any{"side": dataflow.Pusher[int64](&countPusher[int64]{})}})
	out := &countPusher[allocRec]{}
	hs.task.out = out
	hs.task.size = 1024
	batch := allocKbatches(hs.task.Batch)
	feed := func() {
		if err := batch(); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 { // warm up buffers, pools and state
		feed()
	}
	if a := testing.AllocsPerRun(200, feed); a != 0 {
		t.Errorf("keyed process: %.2f allocations per 1024-record batch; want 0", a)
	}
	if n := hs.task.table.(*keyedTable[string, procEntry[int64]]).Len(); n != 64 || out.n == 0 {
		t.Fatalf("%d keys and %d outputs; want 64 and some", n, out.n)
	}
}
