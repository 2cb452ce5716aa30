package migrate

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func stepTables(steps []Step) []*partition.Table {
	out := make([]*partition.Table, len(steps))
	for i, s := range steps {
		out[i] = s.Table
	}
	return out
}

func sameTables(t *testing.T, op string, got []Reconfig, want []*partition.Table) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d steps decoded, %d encoded", len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if r.Operator != op || r.Table.From != w.From || r.Table.Instances() != w.Instances() || !slices.Equal(owners(r.Table), owners(w)) {
			t.Fatalf("step %d: %q %v, want %q %v", i, r.Operator, r.Table, op, w)
		}
	}
}

func mustEncodeSteps(t testing.TB, op string, tables []*partition.Table) []byte {
	t.Helper()
	b, err := EncodeSteps(op, tables)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every plan's tables come back as they were, from epochs, instance
// counts (also past 256, two bytes an owner in the first table) and
// strategies of every kind.
func TestStepsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for c := range 200 {
		k := 1 + r.IntN(300)
		n, m := 1+r.IntN(8), 1+r.IntN(8)
		if c%20 == 0 {
			n, m = 300, 260
		}
		old := randomTable(r, 0, n, k)
		steps, err := Plan(old, randomTable(r, 1+uint64(r.IntN(1<<20)), m, k), Strategy(c%3), Options{Gap: uint64(r.IntN(3))})
		if err != nil {
			t.Fatal(err)
		}
		want := stepTables(steps)
		if len(want) == 0 || c%7 == 0 {
			want = append([]*partition.Table{old}, want...) // a step that changes nothing
			want[0].From = 0
		}
		got, err := DecodeSteps(mustEncodeSteps(t, "op", want))
		if err != nil {
			t.Fatal(err)
		}
		sameTables(t, "op", got, want)
	}
	// An encoding of one reconfiguration reads as one step.
	for _, rc := range samples(t) {
		got, err := DecodeSteps(mustEncode(t, rc))
		if err != nil || len(got) != 1 || !same(got[0], rc) {
			t.Fatalf("%q: %v %v", rc.Operator, got, err)
		}
	}
}

// A fluid plan from 2 to 4 instances over 4096 key groups takes 3072
// steps: whole, its tables would take 12 MiB; encoded, the first table
// whole and a few bytes a step.
func TestStepsSize(t *testing.T) {
	old := partition.Contiguous(4096, 2)
	old4 := partition.Contiguous(4096, 4)
	want, err := partition.NewTable(10, 4, owners(old4))
	if err != nil {
		t.Fatal(err)
	}
	wide, err := partition.NewTable(0, 4, owners(old))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := Plan(wide, want, Fluid, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3072 {
		t.Fatalf("%d steps", len(steps))
	}
	b := mustEncodeSteps(t, "keyed/4", stepTables(steps))
	// Per step: epochs, instances, changes, key group (up to 2 bytes),
	// owner.
	if most := 4096 + 6*len(steps) + 32; len(b) > most {
		t.Fatalf("%d bytes, more than %d", len(b), most)
	}
	got, err := DecodeSteps(b)
	if err != nil {
		t.Fatal(err)
	}
	sameTables(t, "keyed/4", got, stepTables(steps))
}

func TestStepsEncodeErrors(t *testing.T) {
	a := partition.Contiguous(8, 2)
	b, _ := partition.NewTable(5, 2, []int{1, 1, 1, 1, 0, 0, 0, 0})
	c, _ := partition.NewTable(6, 2, []int{1, 1, 1, 1})
	for _, ts := range [][]*partition.Table{nil, {b, a}, {a, b, b}, {a, b, c}} {
		if _, err := EncodeSteps("op", ts); err == nil {
			t.Errorf("%v encoded", ts)
		}
	}
	if _, err := EncodeSteps(strings.Repeat("x", MaxOperatorLen+1), []*partition.Table{a}); err == nil {
		t.Error("long name")
	}
	big := partition.Contiguous(1<<15, 2)
	many := make([]*partition.Table, MaxStepOwners/big.Groups()+1)
	for i := range many {
		many[i] = big
	}
	if _, err := EncodeSteps("op", many); err == nil || !strings.Contains(err.Error(), "owners in all") {
		t.Errorf("%d steps of %d key groups: %v", len(many), big.Groups(), err)
	}
}

func TestStepsCorrupt(t *testing.T) {
	good := mustEncodeSteps(t, "op", stepTables(mustPlan(t)))
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		for _, in := range [][]byte{b, good[:i], reseal(bytes.Clone(good[:i]))} {
			if _, err := DecodeSteps(in); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%x: %v", in, err)
			}
		}
	}
	// operator "", 2 steps of 2 key groups; the first from epoch 1 over
	// 2 instances, owners 0 and 1.
	head := []byte{0, 2, 2, 1, 2, 0, 1}
	for _, c := range []struct {
		body []byte
		want string
	}{
		{[]byte{1, 2, 1, 0, 1}, ""}, // a good one: key group 0 to instance 1
		{[]byte{0, 2, 1, 0, 1}, "epochs since the step before at offset 12: 0 after epoch 1"},
		{[]byte{1, 2, 1, 1, 1}, "key group 1 listed without changing owner"},
		{[]byte{1, 2, 1, 2, 0}, "key group at offset 15: 2 is outside [0, 1]"},
		{[]byte{1, 2, 2, 1, 0, 0, 1}, "past the last of 2"},
		{[]byte{1, 1, 1, 0, 1}, "owner at offset 16: 1 is outside [0, 0]"},
		{[]byte{1, 1, 0}, "owned by instance 1 of 1"},
		{[]byte{1, 2, 1, 0, 1, 9}, "1 bytes after the last step"},
		{[]byte{1, 2, 3, 0, 1}, "changes"},
		{[]byte{1, 2}, "changes at offset 14: truncated"},
	} {
		b := reseal(append(append([]byte(recMagic+"\x02"), append(slices.Clone(head), c.body...)...), 0, 0, 0, 0))
		_, err := DecodeSteps(b)
		if c.want == "" {
			if err != nil {
				t.Errorf("%x: %v", c.body, err)
			}
		} else if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%x: %v, want %q", c.body, err, c.want)
		}
	}
	// The last epoch there is, and a step after it.
	b := reseal(append([]byte(recMagic+"\x02\x00\x02\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01\x00\x01\x01\x00"), 0, 0, 0, 0))
	if _, err := DecodeSteps(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "after epoch 18446744073709551615") {
		t.Errorf("epoch overflow: %v", err)
	}
}

func mustPlan(t testing.TB) []Step {
	old := partition.Contiguous(16, 2)
	want := partition.Contiguous(16, 4)
	wide, _ := partition.NewTable(0, 4, owners(old))
	want.From = 3
	steps, err := Plan(wide, want, Batched, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// Mutated inputs rarely carry a valid checksum, so each input is also
// decoded with its checksum recomputed, to reach the field decoder.
// What decodes re-encodes to the same bytes.
func FuzzDecodeSteps(f *testing.F) {
	f.Add(mustEncodeSteps(f, "op", stepTables(mustPlan(f))))
	f.Add(mustEncode(f, samples(f)[0]))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(bytes.Clone(b))} {
			rs, err := DecodeSteps(in)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error does not wrap ErrCorrupt: %v", err)
				}
				continue
			}
			var out []byte
			if in[len(recMagic)] == recVersion {
				out, err = Encode(rs[0])
			} else {
				ts := make([]*partition.Table, len(rs))
				for i, r := range rs {
					ts[i] = r.Table
				}
				out, err = EncodeSteps(rs[0].Operator, ts)
			}
			if err != nil {
				t.Fatalf("decoded steps do not encode: %v", err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
		}
	})
}
