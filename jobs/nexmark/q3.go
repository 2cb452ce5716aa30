package nexmark

import (
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// q3 joins the auctions of category 10 with their sellers, for sellers in
// Oregon, Idaho or California: an unwindowed inner join on seller = person
// id, each pair as it completes.

func init() {
	register("q3", &query{
		header: "name,city,state,id", cols: cols("sssi"),
		add: addQ3, ref: refQ3,
		base: func(g gen.Nexmark) (c Checksum, n int64, err error) {
			st := map[int64]*q3State{}
			var out []q3Row
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				if in, ok := q3Input(e); ok {
					s := st[in.ID]
					if s == nil {
						s = &q3State{}
						st[in.ID] = s
					}
					out = joinQ3(s, in, out[:0])
					for i := range out {
						c.add(out[i].hash())
					}
				}
			})
			return c, n, err
		},
	})
}

// q3In is a person of OR, ID or CA (Person set) or an auction of category
// 10; ID is the person's id or the auction's seller.
type q3In struct {
	Person            bool
	ID, Auction       int64
	Name, City, State string
}

func q3Input(e *gen.NexmarkEvent) (q3In, bool) {
	switch {
	case e.Kind == gen.PersonKind && q3Region(e.Person.State):
		p := &e.Person
		return q3In{Person: true, ID: p.ID, Name: p.Name, City: p.City, State: p.State}, true
	case e.Kind == gen.AuctionKind && e.Auction.Category == 10:
		return q3In{ID: e.Auction.Seller, Auction: e.Auction.ID}, true
	}
	return q3In{}, false
}

func q3Region(s string) bool { return s == "OR" || s == "ID" || s == "CA" }

// q3State is what one person id has seen: the persons with that id and
// the auctions they sell.
type q3State struct {
	Persons  []q3In
	Auctions []int64
}

// joinQ3 adds in to s and appends the pairs it completes.
func joinQ3(s *q3State, in q3In, out []q3Row) []q3Row {
	if in.Person {
		s.Persons = append(s.Persons, in)
		for _, a := range s.Auctions {
			out = append(out, q3Row{in.Name, in.City, in.State, a})
		}
		return out
	}
	s.Auctions = append(s.Auctions, in.Auction)
	for _, p := range s.Persons {
		out = append(out, q3Row{p.Name, p.City, p.State, in.Auction})
	}
	return out
}

func addQ3(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
	kept := weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool { _, ok := q3Input(e); return ok }, weir.Name("q3-filter"), weir.Stateless())
	in := weir.MapRef(kept, func(e *gen.NexmarkEvent) q3In { v, _ := q3Input(e); return v }, weir.Name("q3-select"), weir.Stateless())
	keyed := weir.KeyBy(in, func(v q3In) int64 { return v.ID }, weir.Name("person"))
	emit(weir.Process(keyed, func(_ int64, s *q3State, v q3In, out []q3Row) []q3Row {
		return joinQ3(s, v, out)
	}, weir.Name("q3-join")), sk, nil)
}

func refQ3(evs []gen.NexmarkEvent) []string {
	bySeller := map[int64][]int64{}
	for _, e := range evs {
		if e.Kind == gen.AuctionKind && e.Auction.Category == 10 {
			bySeller[e.Auction.Seller] = append(bySeller[e.Auction.Seller], e.Auction.ID)
		}
	}
	var rs []q3Row
	for _, e := range evs {
		p := e.Person
		if e.Kind != gen.PersonKind || (p.State != "OR" && p.State != "ID" && p.State != "CA") {
			continue
		}
		for _, a := range bySeller[p.ID] {
			rs = append(rs, q3Row{p.Name, p.City, p.State, a})
		}
	}
	return rowsOf(rs)
}

type q3Row struct {
	Name, City, State string
	ID                int64
}

func (r *q3Row) csv(l line) line { return l.str(r.Name).str(r.City).str(r.State).int(r.ID) }
func (r *q3Row) hash() uint64 {
	return newHasher().str(r.Name).str(r.City).str(r.State).int(r.ID).sum()
}
