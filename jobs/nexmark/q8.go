package nexmark

import (
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q8, new users: the persons who registered in a 10 s tumbling window and
// opened an auction in the same window, once per person and window (with
// the least name if the id registered under several).

const q8Size = 10_000 // ms

func init() {
	register("q8", &query{
		header: "id,name,starttime", cols: cols("isi"),
		costed: addQ8, ref: refQ8, base: baseQ8,
	})
}

// q8In is a person registering (Person set) or an auction of seller ID.
type q8In struct {
	ID, DateTime int64
	Name         string
	Person       bool
}

// q8Acc is what a person id did in a window: registered (under Name) or
// opened an auction, or both.
type q8Acc struct {
	Name            string
	Person, Auction bool
}

func (a q8Acc) add(v q8In) q8Acc {
	return a.merge(q8Acc{Name: v.Name, Person: v.Person, Auction: !v.Person})
}

func (a q8Acc) merge(b q8Acc) q8Acc {
	if b.Person && (!a.Person || b.Name < a.Name) {
		a.Name, a.Person = b.Name, true
	}
	a.Auction = a.Auction || b.Auction
	return a
}

// addQ8 adds q8; cost, if set, is called for every person and auction a
// window folds.
func addQ8(ev weir.Stream[gen.NexmarkEvent], sk Sinks, cost func()) {
	kept := weir.FilterRef(timedEvents(ev), func(e *gen.NexmarkEvent) bool { return e.Kind != gen.BidKind }, weir.Name("q8-filter"), weir.Stateless())
	in := weir.MapRef(kept, q8Input, weir.Name("q8-select"), weir.Stateless())
	keyed := weir.KeyBy(in, func(v q8In) int64 { return v.ID }, weir.Name("person"))
	add := q8Acc.add
	if cost != nil {
		add = func(a q8Acc, v q8In) q8Acc { cost(); return a.add(v) }
	}
	acts := weir.Aggregate(weir.Window(keyed, weir.Tumbling(q8Size*time.Millisecond), weir.WindowOptions(weir.Name("q8-window"))),
		weir.Aggregator[q8In, q8Acc, q8Acc]{Add: add, Merge: q8Acc.merge})
	both := weir.FilterRef(acts, func(r *weir.WindowResult[int64, q8Acc]) bool { return r.Value.Person && r.Value.Auction }, weir.Name("q8-both"), weir.Stateless())
	emit(weir.MapRef(both, func(r *weir.WindowResult[int64, q8Acc]) q8Row {
		return q8Row{r.Key, r.Value.Name, r.Start}
	}, weir.Name("q8"), weir.Stateless()), sk, nil)
}

// q8Input is a person or an auction (not a bid) as q8 sees it.
func q8Input(e *gen.NexmarkEvent) q8In {
	if e.Kind == gen.PersonKind {
		return q8In{ID: e.Person.ID, DateTime: e.Person.DateTime, Name: e.Person.Name, Person: true}
	}
	return q8In{ID: e.Auction.Seller, DateTime: e.Auction.DateTime}
}

func refQ8(evs []gen.NexmarkEvent) []string {
	type pw struct{ id, start int64 }
	acts := map[pw]q8Acc{}
	for _, e := range evs {
		switch e.Kind {
		case gen.PersonKind:
			k := pw{e.Person.ID, floorDiv(e.Person.DateTime, q8Size)}
			if a := acts[k]; !a.Person || e.Person.Name < a.Name {
				a.Name, a.Person = e.Person.Name, true
				acts[k] = a
			}
		case gen.AuctionKind:
			k := pw{e.Auction.Seller, floorDiv(e.Auction.DateTime, q8Size)}
			a := acts[k]
			a.Auction = true
			acts[k] = a
		}
	}
	var rs []q8Row
	for k, a := range acts {
		if a.Person && a.Auction {
			rs = append(rs, q8Row{k.id, a.Name, k.start})
		}
	}
	return rowsOf(rs)
}

// baseQ8 keeps the current window's persons and sellers; events come in
// time order from the generator.
func baseQ8(g gen.Nexmark) (c Checksum, n int64, err error) {
	acts := map[int64]q8Acc{}
	window := int64(0)
	flush := func() {
		for id, a := range acts {
			if a.Person && a.Auction {
				r := q8Row{id, a.Name, window}
				c.add(r.hash())
			}
		}
		clear(acts)
	}
	n, err = forEach(g, func(e *gen.NexmarkEvent) {
		if e.Kind == gen.BidKind {
			return
		}
		v := q8Input(e)
		if w := floorDiv(v.DateTime, q8Size); w != window {
			flush()
			window = w
		}
		acts[v.ID] = acts[v.ID].add(v)
	})
	flush()
	return c, n, err
}

type q8Row struct {
	ID    int64
	Name  string
	Start int64
}

func (r *q8Row) csv(l line) line { return l.int(r.ID).str(r.Name).int(r.Start) }
func (r *q8Row) hash() uint64    { return newHasher().int(r.ID).str(r.Name).int(r.Start).sum() }
