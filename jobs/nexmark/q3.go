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
			persons := map[int64][]q3Person{}
			sold := map[int64][]int64{} // seller -> auctions
			n, err = forEach(g, func(e *gen.NexmarkEvent) {
				switch {
				case e.Kind == gen.PersonKind && q3Region(e.Person.State):
					p := q3Person{e.Person.ID, e.Person.Name, e.Person.City, e.Person.State}
					persons[p.ID] = append(persons[p.ID], p)
					for _, a := range sold[p.ID] {
						r := q3Row{p.Name, p.City, p.State, a}
						c.add(r.hash())
					}
				case e.Kind == gen.AuctionKind && e.Auction.Category == 10:
					a := &e.Auction
					sold[a.Seller] = append(sold[a.Seller], a.ID)
					for _, p := range persons[a.Seller] {
						r := q3Row{p.Name, p.City, p.State, a.ID}
						c.add(r.hash())
					}
				}
			})
			return c, n, err
		},
	})
}

func q3Region(s string) bool { return s == "OR" || s == "ID" || s == "CA" }

func addQ3(ev weir.Stream[gen.NexmarkEvent], sk Sinks) {
	persons := weir.MapRef(weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool {
		return e.Kind == gen.PersonKind && q3Region(e.Person.State)
	}, weir.Name("q3-persons"), weir.Stateless()), func(e *gen.NexmarkEvent) q3Person {
		return q3Person{e.Person.ID, e.Person.Name, e.Person.City, e.Person.State}
	}, weir.Name("q3-person"), weir.Stateless())
	auctions := weir.MapRef(weir.FilterRef(ev, func(e *gen.NexmarkEvent) bool {
		return e.Kind == gen.AuctionKind && e.Auction.Category == 10
	}, weir.Name("q3-auctions"), weir.Stateless()), func(e *gen.NexmarkEvent) q3Auction {
		return q3Auction{e.Auction.ID, e.Auction.Seller}
	}, weir.Name("q3-auction"), weir.Stateless())
	emit(weir.InnerJoin(
		weir.KeyBy(persons, func(p q3Person) int64 { return p.ID }, weir.Name("person")),
		weir.KeyBy(auctions, func(a q3Auction) int64 { return a.Seller }, weir.Name("person")),
		func(_ int64, p q3Person, a q3Auction) q3Row { return q3Row{p.Name, p.City, p.State, a.ID} },
		weir.Name("q3-join")), sk, nil)
}

// q3Person and q3Auction are what q3 keeps of a person and an auction.
type q3Person struct {
	ID                int64
	Name, City, State string
}

type q3Auction struct{ ID, Seller int64 }

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
