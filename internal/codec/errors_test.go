package codec

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

type BadFunc struct {
	Fields []struct {
		Ok int
		F  func()
	}
}

type BadChan struct {
	A struct{ C chan int }
}

type BadIface struct {
	M map[string]any
}

type BadPtr struct {
	P *unsafe.Pointer
}

type BadKey struct {
	M map[[2]BadChan]int
}

type Node struct {
	V    int
	Next *Node
}

type Tree struct {
	Kids []Tree
}

func TestUnsupported(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{errOf[BadFunc](), "codec: BadFunc.Fields[0].F: func type not supported"},
		{errOf[BadChan](), "codec: BadChan.A.C: chan type not supported"},
		{errOf[BadIface](), "codec: BadIface.M[key]: interface type not supported"},
		{errOf[BadPtr](), "codec: BadPtr.P: unsafe.Pointer type not supported"},
		{errOf[BadKey](), "codec: BadKey.M{key}[0].A.C: chan type not supported"},
		{errOf[[]func()](), "codec: []func()[0]: func type not supported"},
		{errOf[any](), "codec: interface {}: interface type not supported"},
		{errOf[Node](), "codec: Node.Next: recursive type codec.Node not supported"},
		{errOf[Tree](), "codec: Tree.Kids[0]: recursive type codec.Tree not supported"},
	}
	for _, c := range cases {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, ErrUnsupported) {
			t.Errorf("error %v, want %s", c.err, c.want)
		}
	}
}

func errOf[T any]() error {
	_, err := For[T]()
	return err
}

type Reg struct{ X int }

// countCodec encodes only the number of values.
type countCodec struct{}

func (countCodec) Append(buf []byte, vs []Reg) []byte {
	return binary.AppendUvarint(buf, uint64(len(vs)))
}

func (countCodec) Decode(buf []byte, vs []Reg) ([]Reg, error) {
	n, k := binary.Uvarint(buf)
	if k <= 0 || k != len(buf) || n > 1000 {
		return vs, errors.New("codec test: bad count")
	}
	return append(vs, make([]Reg, n)...), nil
}

func TestRegister(t *testing.T) {
	def, err := For[Reg]()
	if err != nil {
		t.Fatal(err)
	}
	Register[Reg](countCodec{})
	c, _ := For[Reg]()
	if _, ok := c.(countCodec); !ok {
		t.Fatalf("For after Register: %T", c)
	}
	if got := c.Append(nil, []Reg{{1}, {2}}); len(got) != 1 || got[0] != 2 {
		t.Fatalf("registered codec not used: % x", got)
	}
	Register[Reg](nil)
	if c, _ := For[Reg](); c != def {
		t.Fatalf("For after unregistering: %T", c)
	}
	// A registered codec makes an unsupported type usable.
	Register[BadFunc](badFuncCodec{})
	defer Register[BadFunc](nil)
	if _, err := For[BadFunc](); err != nil {
		t.Fatal(err)
	}
}

type badFuncCodec struct{}

func (badFuncCodec) Append(buf []byte, _ []BadFunc) []byte { return buf }
func (badFuncCodec) Decode(_ []byte, vs []BadFunc) ([]BadFunc, error) {
	return vs, nil
}

func TestConcurrentFor(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 100 {
				c, err := For[Partial[string, [3]int]]()
				if err != nil {
					t.Error(err)
					return
				}
				vs := []Partial[string, [3]int]{{K: "k", Acc: [3]int{i}}}
				if got, err := c.Decode(c.Append(nil, vs), nil); err != nil || got[0] != vs[0] {
					t.Error("round trip", err)
				}
				if i%4 == 0 {
					Register[Reg](countCodec{})
					Register[Reg](nil)
				}
				_, _ = For[Reg]()
			}
		})
	}
	wg.Wait()
}

type FlatA struct{ A, B int64 }
type FlatB struct{ A, B uint64 }
type FlatC struct {
	A int32
	B int64
}

func TestMismatch(t *testing.T) {
	a, _ := For[FlatA]()
	buf := a.Append(nil, []FlatA{{1, 2}})
	if _, err := must(For[FlatB]()).Decode(buf, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("FlatA as FlatB: %v", err)
	}
	if _, err := must(For[FlatC]()).Decode(buf, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("FlatA as FlatC: %v", err)
	}
	p := must(For[Partial[string, int64]]()).Append(nil, []Partial[string, int64]{{K: "x"}})
	if _, err := must(For[Partial[string, int32]]()).Decode(p, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("Partial[string, int64] as Partial[string, int32]: %v", err)
	}
	if _, err := must(For[FlatA]()).Decode(p, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("compiled batch as raw: %v", err)
	}
	// The same shape under another name decodes.
	type Other struct {
		X          uint64
		Y          string
		Start, End int64
		Z          int64
	}
	if _, err := must(For[Other]()).Decode(p, nil); err != nil {
		t.Errorf("same shape: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	c := must(For[Partial[string, []int32]]())
	good := c.Append(nil, []Partial[string, []int32]{{K: "abc", Acc: []int32{1, 2}}})
	hdr := good[:9]
	batch := func(count, n uint64, body ...byte) []byte {
		b := append([]byte(nil), hdr...)
		b = binary.AppendUvarint(b, count)
		b = binary.AppendUvarint(b, n)
		return append(b, body...)
	}
	cases := map[string][]byte{
		"huge count":       batch(1<<62, 3, 1, 2, 3),
		"huge body":        batch(1, 1<<40, 1, 2, 3),
		"huge string":      batch(1, 6, 0, 0xff, 0xff, 0xff, 0xff, 0x0f),
		"huge slice":       batch(1, 8, 0, 1, 0, 0, 0, 0xff, 0xff, 0x7f),
		"varint overflow":  batch(1, 11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"int32 overflow":   batch(1, 10, 0, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"trailing":         batch(1, 7, 0, 0, 0, 0, 0, 0, 9),
		"bad format":       append([]byte{'X'}, good[1:]...),
		"short header":     good[:5],
		"count over body":  batch(3, 6, 0, 0, 0, 0, 0, 0),
		"nonzero trailing": append(append([]byte(nil), good...), 0),
	}
	for name, in := range cases {
		vs := make([]Partial[string, []int32], 2)
		out, err := c.Decode(in, vs)
		if err == nil || !strings.HasPrefix(err.Error(), "codec: ") || len(out) != 2 {
			t.Errorf("%s: %d values, error %v", name, len(out), err)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	// Bools in a raw batch must be 0 or 1.
	b := must(For[Bools]())
	raw := b.Append(nil, []Bools{{A: true}})
	raw[len(raw)-1-3-5] = 2 // the A byte: size 8, A at 0, B at 1..5, pad, x at 6
	if _, err := b.Decode(raw, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("bool 2: %v", err)
	}
}

func TestDecodeDoesNotAllocateForLyingLengths(t *testing.T) {
	c := must(For[[]string]())
	in := c.Append(nil, [][]string{{"a"}})
	// Claim a slice of 2^40 strings in a tiny body.
	bad := append(append([]byte(nil), in[:11]...), 6, 0xff, 0xff, 0xff, 0xff, 0x7f)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := c.Decode(bad, nil); err == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("100 decodes of a lying batch allocated %d bytes", n)
	}
}
