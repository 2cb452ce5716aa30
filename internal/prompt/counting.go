package prompt

import (
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/window"
)

// Under an aggregator that reads no record (Count), a deposit keeps, per
// key, the windows of its records in arrival order, each with how many
// records in a row fell in it, instead of the records: a record then costs
// an increment where it cost a copy into its key's chunk, and the round's
// map task adds counts, not records. A range [lo, hi) of a key's records,
// which is what a fragment takes, is still a range of its arrivals.
//
// Lateness is decided on arrival, at the sender's watermark: the round runs
// at a watermark no later than the one the sender's last marker carried
// (the window's aligned watermark, the least of the senders'), so a record
// not late at the sender is not late at the round; a record late at the
// sender goes raw to its owner, which decides. A sender restored from a
// checkpoint does not know the window's watermark until its first marker,
// so its first deposit keeps records.

// cwin is a run of a key's records in one window.
type cwin struct {
	start, end int64
	n          int32
}

// window returns the window of a record at ts and whether it is late at
// the sender's watermark. Counting deposits are made for tumbling and
// global windows only.
func (e *microEx[K, T, A]) window(ts int64) (start, end int64, late bool) {
	spec := &e.x.spec
	if spec.Kind == window.Global {
		return window.GlobalStart, window.GlobalEnd, false
	}
	start, end, ok := e.tc.Window(ts, spec.Size)
	if !ok {
		panic(dataflow.BadWindowTime(ts, *spec))
	}
	return start, end, spec.Late(end, e.wm)
}

// sendRaw sends a record to its key group's owner as it is.
func (e *microEx[K, T, A]) sendRaw(h uint64, k K, ts int64, v T) error {
	o, err := e.raw.Send(h, k, ts, v)
	if e.hot != nil {
		e.hot.Cold[o]++
	}
	e.rawN++
	return err
}

// count adds a record of slot s in window [start, end).
func (d *deposit[K, T]) count(s int32, start, end int64) {
	if c := d.wins.Last(s); c != nil && c.start == start && c.end == end {
		c.n++
		return
	}
	d.wins.Add(s, cwin{start: start, end: end, n: 1})
}

// foldCounts adds records [lo, hi) of counting deposit d's slot (global
// key g) to the map task's partials.
func (t *MicroTask[K, T, A]) foldCounts(d *deposit[K, T], slot, g int32, lo, hi int) {
	x := t.x
	set := t.acc.Entry(g)
	t.folded += int64(hi - lo)
	pos := 0
	d.wins.Range(slot, 0, d.wins.Len(slot), func(run []cwin) {
		for _, c := range run {
			if a, b := max(lo, pos), min(hi, pos+int(c.n)); a < b {
				w := set.Get(c.start, c.end, x.init)
				w.Acc = x.addN(w.Acc, int64(b-a))
			}
			pos += int(c.n)
		}
	})
}
