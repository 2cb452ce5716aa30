package partition

import (
	"fmt"
	"slices"
)

// Table is key-group ownership as data: the instance, among Instances,
// that owns each key group, in force from epoch From. Every keyed
// exchange routes by it, a restore reads the key groups it assigns, and
// the ownership check of a keyed region consults it, so that a job that
// changes its table changes all of them at once.
//
// A Table is not changed once made: a new assignment is a new Table with
// a later From. It may be read from several goroutines.
type Table struct {
	// From is the first epoch the table is in force for.
	From      uint64
	instances int
	owner     []uint16
}

// maxInstances bounds the instances a Table assigns (owners are uint16).
const maxInstances = 1 << 16

// Contiguous returns the default table of k key groups over p instances:
// instance i owns the contiguous range RangeOf(i, k, p), as Flink's
// KeyGroupRangeAssignment does.
func Contiguous(k, p int) *Table {
	owner := make([]uint16, k)
	for kg := range owner {
		owner[kg] = uint16(Owner(KeyGroup(kg), k, p))
	}
	return &Table{instances: p, owner: owner}
}

// NewTable returns the table that gives key group kg to owner[kg], in
// force from epoch from. Every owner must be in [0, instances).
func NewTable(from uint64, instances int, owner []int) (*Table, error) {
	if instances < 1 || instances > maxInstances {
		return nil, fmt.Errorf("partition: a table over %d instances; want 1 to %d", instances, maxInstances)
	}
	if len(owner) == 0 {
		return nil, fmt.Errorf("partition: a table of no key groups")
	}
	t := &Table{From: from, instances: instances, owner: make([]uint16, len(owner))}
	for kg, o := range owner {
		if o < 0 || o >= instances {
			return nil, fmt.Errorf("partition: key group %d owned by instance %d of %d", kg, o, instances)
		}
		t.owner[kg] = uint16(o)
	}
	return t, nil
}

// Groups is the number of key groups.
func (t *Table) Groups() int { return len(t.owner) }

// Instances is the number of instances the key groups are assigned to.
func (t *Table) Instances() int { return t.instances }

// Owner returns the instance that owns key group kg.
func (t *Table) Owner(kg KeyGroup) int { return int(t.owner[kg]) }

// Route returns the instance that owns the key whose hash is h.
func (t *Table) Route(h uint64) int { return int(t.owner[KeyGroupOf(h, len(t.owner))]) }

// Owns reports whether instance inst owns key group kg.
func (t *Table) Owns(inst int, kg KeyGroup) bool { return int(t.owner[kg]) == inst }

// Owned returns the key groups instance inst owns, in increasing order.
func (t *Table) Owned(inst int) []KeyGroup {
	var out []KeyGroup
	for kg, o := range t.owner {
		if int(o) == inst {
			out = append(out, KeyGroup(kg))
		}
	}
	return out
}

// Span is one more than the highest instance that owns a key group: the
// instances, from the first, the table gives key groups to.
func (t *Table) Span() int {
	hi := uint16(0)
	for _, o := range t.owner {
		hi = max(hi, o)
	}
	return int(hi) + 1
}

func (t *Table) String() string {
	return fmt.Sprintf("table of %d key groups over %d instances from epoch %d", len(t.owner), t.instances, t.From)
}

// Equal reports whether t and o assign every key group alike over as many
// instances (their From may differ).
func (t *Table) Equal(o *Table) bool {
	return t.instances == o.instances && slices.Equal(t.owner, o.owner)
}
