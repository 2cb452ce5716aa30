package codec

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

type FuzzRec struct {
	ID   int64
	Name string
	Tags []string
	Vals []int32
	Sub  []FuzzSub
	P    *FuzzSub
	M    map[string]uint16
	B    []byte
	OK   bool
	Arr  [2]uint8
	U    uint16
}

type FuzzSub struct {
	X uint32
	S string
}

type FuzzFlat struct {
	A uint64
	B int32
	C bool
	D float64
	E [3]bool
	F int8
}

func FuzzDecodeStruct(f *testing.F) {
	c := must(For[FuzzRec]())
	f.Add([]byte{})
	f.Add(c.Append(nil, []FuzzRec{{}}))
	f.Add(c.Append(nil, []FuzzRec{{ID: -1, Name: "n", Tags: []string{"a", ""}, Vals: []int32{-5, 1 << 30},
		Sub: []FuzzSub{{1, "s"}}, P: &FuzzSub{2, "p"}, M: map[string]uint16{"k": 7}, B: []byte{1}, OK: true,
		Arr: [2]uint8{3, 4}, U: 300}, {Tags: []string{}}}))
	f.Add(c.Append(c.Append(nil, []FuzzRec{{Name: "x"}}), []FuzzRec{{ID: 9}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		v1, err := c.Decode(in, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrMismatch) {
				t.Fatalf("error wraps neither ErrMalformed nor ErrMismatch: %v", err)
			}
			if len(v1) != 0 {
				t.Fatalf("%d values returned with an error", len(v1))
			}
			return
		}
		e1 := c.Append(nil, v1)
		v2, err := c.Decode(e1, nil)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if (len(v1) != 0 || len(v2) != 0) && !reflect.DeepEqual(v1, v2) {
			t.Fatalf("re-decoded values differ:\n%#v\n%#v", v1, v2)
		}
	})
}

func FuzzDecodeFlat(f *testing.F) {
	c := must(For[FuzzFlat]())
	f.Add([]byte{})
	f.Add(c.Append(nil, []FuzzFlat{{}}))
	f.Add(c.Append(nil, []FuzzFlat{{A: 1, B: -2, C: true, D: 1.5, E: [3]bool{true}, F: -1}, {}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		v1, err := c.Decode(in, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrMismatch) {
				t.Fatalf("error wraps neither ErrMalformed nor ErrMismatch: %v", err)
			}
			return
		}
		e1 := c.Append(nil, v1)
		v2, err := c.Decode(e1, nil)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		// Compare encodings: floats may be NaN.
		if e2 := c.Append(nil, v2); !bytes.Equal(e1, e2) {
			t.Fatalf("re-encodings differ:\n% x\n% x", e1, e2)
		}
		if len(v1) != len(v2) {
			t.Fatalf("%d values, then %d", len(v1), len(v2))
		}
	})
}
