package migrate

import (
	"math"

	"github.com/weirstream/weir/internal/partition"
)

// Never is a Life's Join for an instance that takes no part, and its
// Retire for one that does not retire.
const Never = math.MaxUint64

// Life is when one instance of a keyed operator takes part, by the tables
// it routes by: from epoch Join to the epoch before Retire.
type Life struct{ Join, Retire uint64 }

// Lives returns, for each of the tables' instances, when it takes part,
// by tables: the tables in force from epoch from on, the first at from
// (the later ones from their own From, in increasing order).
//
//   - An instance that owns a key group in the first table takes part
//     from from; one that first owns one in a later table, in force from
//     e, joins at e-1: its first marker, the one that ends e-1, is where
//     it takes the key groups' state, before it reads a record of e.
//   - An instance that owns none in the last table retires after the
//     epoch from which it owns none (Retire is that epoch plus 1): its
//     key groups leave it at the marker that ends the epoch before, which
//     is not its last.
//   - An instance that owns none in any table takes no part (Join and
//     Retire Never).
func Lives(tables []*partition.Table, from uint64) []Life {
	if len(tables) == 0 {
		return nil
	}
	n := tables[0].Instances()
	for _, t := range tables {
		n = max(n, t.Instances())
	}
	owns := make([][]bool, len(tables)) // table -> instance -> owns a key group
	for k, t := range tables {
		owns[k] = make([]bool, n)
		for kg := range t.Groups() {
			owns[k][t.Owner(partition.KeyGroup(kg))] = true
		}
	}
	lives := make([]Life, n)
	for inst := range lives {
		first, last := -1, -1
		for k := range tables {
			if owns[k][inst] {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		l := Life{Join: Never, Retire: Never}
		switch {
		case first < 0:
		case first == 0:
			l.Join = from
		default:
			l.Join = tables[first].From - 1
		}
		if first >= 0 && last < len(tables)-1 {
			l.Retire = tables[last+1].From + 1
		}
		lives[inst] = l
	}
	return lives
}
