package migrate

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weirstream/weir/internal/partition"
)

// The encoding of the steps of one operator (EncodeSteps), whose size
// grows with the key groups that change owner, not with steps × key
// groups:
//
//	"WRRC" magic, version 2,
//	len(operator), operator bytes, steps, key groups (uvarints),
//	the first step: its epoch, instances (uvarints) and the owner of every
//	key group as in version 1,
//	each later step: the epochs since the step before (at least 1), its
//	instances and how many key groups change owner (uvarints), then each
//	of those in increasing order: its distance from the one before less
//	one (the first: the key group itself) and its new owner (uvarints),
//	CRC-32C (Castagnoli) of all that precedes, 4 bytes little-endian.
//
// A key group is listed only if its owner changes, so, as in version 1,
// the tables have exactly one encoding.
const stepsVersion = 2

// MaxStepOwners bounds steps × key groups of an EncodeSteps encoding:
// the owners its decoded tables hold (two bytes each), over every step.
// A fluid plan over 4096 key groups (at most 4096 steps) fits.
const MaxStepOwners = 1 << 25

// EncodeSteps returns the canonical encoding of the reconfigurations of
// operator op to tables, in order: every table of as many key groups,
// each in force from a later epoch than the one before.
func EncodeSteps(op string, tables []*partition.Table) ([]byte, error) {
	if len(tables) == 0 {
		return nil, fmt.Errorf("migrate: no steps of %q to encode", op)
	}
	if len(op) > MaxOperatorLen {
		return nil, fmt.Errorf("migrate: operator name of %d bytes; at most %d", len(op), MaxOperatorLen)
	}
	first := tables[0]
	k := first.Groups()
	if len(tables)*k > MaxStepOwners {
		return nil, fmt.Errorf("migrate: %d steps of %d key groups; at most %d owners in all", len(tables), k, MaxStepOwners)
	}
	b := make([]byte, 0, headerLen+40+len(op)+k*ownerWidth(first.Instances())+8*len(tables)+trailerLen)
	b = append(b, recMagic...)
	b = append(b, stepsVersion)
	b = binary.AppendUvarint(b, uint64(len(op)))
	b = append(b, op...)
	b = binary.AppendUvarint(b, uint64(len(tables)))
	b = binary.AppendUvarint(b, uint64(k))
	b = binary.AppendUvarint(b, first.From)
	b = binary.AppendUvarint(b, uint64(first.Instances()))
	b = appendOwners(b, first)
	var changed []int
	for i, t := range tables[1:] {
		prev := tables[i]
		if t.Groups() != k {
			return nil, fmt.Errorf("migrate: step %d of %q has %d key groups, the first %d", i+1, op, t.Groups(), k)
		}
		if t.From <= prev.From {
			return nil, fmt.Errorf("migrate: step %d of %q takes force at epoch %d, not after step %d's %d", i+1, op, t.From, i, prev.From)
		}
		changed = changed[:0]
		for kg := range k {
			if g := partition.KeyGroup(kg); t.Owner(g) != prev.Owner(g) {
				changed = append(changed, kg)
			}
		}
		b = binary.AppendUvarint(b, t.From-prev.From)
		b = binary.AppendUvarint(b, uint64(t.Instances()))
		b = binary.AppendUvarint(b, uint64(len(changed)))
		next := 0
		for _, kg := range changed {
			b = binary.AppendUvarint(b, uint64(kg-next))
			b = binary.AppendUvarint(b, uint64(t.Owner(partition.KeyGroup(kg))))
			next = kg + 1
		}
	}
	return seal(b), nil
}

// DecodeSteps reads an encoding made by EncodeSteps, or one made by Encode
// as a single step. Like Decode it never panics and every error it returns
// wraps ErrCorrupt; it allocates at most MaxStepOwners owners, and fewer
// than the square of len(b): each step takes at least three bytes, and
// each key group at least one.
func DecodeSteps(b []byte) ([]Reconfig, error) {
	if len(b) > len(recMagic) && b[len(recMagic)] == recVersion {
		r, err := Decode(b)
		if err != nil {
			return nil, err
		}
		return []Reconfig{r}, nil
	}
	d, err := open(b, stepsVersion)
	if err != nil {
		return nil, err
	}
	name, err := d.operator()
	if err != nil {
		return nil, err
	}
	steps, err := d.bounded("steps", 1, uint64(len(d.b)))
	if err != nil {
		return nil, err
	}
	groups, err := d.bounded("key groups", 1, uint64(min(len(d.b), MaxStepOwners/steps)))
	if err != nil {
		return nil, err
	}
	epoch, err := d.uvarint("epoch")
	if err != nil {
		return nil, err
	}
	instances, err := d.bounded("instances", 1, 1<<16)
	if err != nil {
		return nil, err
	}
	owner := make([]int, groups)
	if err := d.owners(owner, instances); err != nil {
		return nil, err
	}
	out := make([]Reconfig, 0, steps)
	for i := range steps {
		if i > 0 {
			if epoch, instances, err = d.step(epoch, owner); err != nil {
				return nil, err
			}
		}
		t, err := partition.NewTable(epoch, instances, owner)
		if err != nil {
			return nil, d.fail(fmt.Sprintf("step %d", i), "%v", err)
		}
		out = append(out, Reconfig{Operator: name, Table: t})
	}
	if d.off != len(d.b) {
		return nil, d.fail("end", "%d bytes after the last step", len(d.b)-d.off)
	}
	return out, nil
}

// step reads a step after the first, which took force at epoch prev,
// into owner, and returns its epoch and instances.
func (d *decoder) step(prev uint64, owner []int) (uint64, int, error) {
	start := d.off
	gap, err := d.uvarint("epochs since the step before")
	if err != nil {
		return 0, 0, err
	}
	if gap == 0 || gap > math.MaxUint64-prev {
		d.off = start
		return 0, 0, d.fail("epochs since the step before", "%d after epoch %d", gap, prev)
	}
	instances, err := d.bounded("instances", 1, 1<<16)
	if err != nil {
		return 0, 0, err
	}
	// Each change takes at least two bytes.
	n, err := d.bounded("changes", 0, uint64(min(len(owner), (len(d.b)-d.off)/2)))
	if err != nil {
		return 0, 0, err
	}
	next := 0
	for range n {
		if next == len(owner) {
			return 0, 0, d.fail("key group", "past the last of %d", len(owner))
		}
		skip, err := d.bounded("key group", 0, uint64(len(owner)-next-1))
		if err != nil {
			return 0, 0, err
		}
		kg := next + skip
		start = d.off
		o, err := d.bounded("owner", 0, uint64(instances-1))
		if err != nil {
			return 0, 0, err
		}
		if o == owner[kg] {
			d.off = start
			return 0, 0, d.fail("owner", "key group %d listed without changing owner (%d)", kg, o)
		}
		owner[kg], next = o, kg+1
	}
	return prev + gap, instances, nil
}
