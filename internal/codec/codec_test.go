package codec

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

type (
	MyInt   int32
	MyStr   string
	MyBytes []byte
	MyByte  byte
	MyFloat float64
	MyBool  bool
)

type Inner struct {
	A int16
	B string
	c [3]uint8
}

type Embedded struct {
	E1 uint64
	e2 string
}

type Rich struct {
	Embedded
	*Inner
	Name    string
	age     int
	Tags    []string
	Nums    []int64
	Floats  []float64
	Arr     [2]Inner
	Matrix  [2][3]int32
	P       *int64
	PP      **string
	Nil     *Inner
	M       map[string]int32
	MS      map[int]Inner
	NilM    map[string]int
	Bytes   []byte
	Empty   []int
	NilS    []int
	Flag    bool
	F32     float32
	C128    complex128
	Named   MyInt
	Nested  struct{ X, Y []Inner }
	private struct{ u uint8 }
	_       [0]func()
}

// Partial and Keyed are generic record types like the engine's.
type Partial[K, A any] struct {
	H          uint64
	K          K
	Start, End int64
	Acc        A
}

type Keyed[K, V any] struct {
	H  uint64
	TS int64
	K  K
	V  V
}

type Flat struct {
	ID     uint64
	User   uint32
	Amount int64
	On     bool
	F      float32
	Arr    [3]int8
}

type Bools struct {
	A bool
	B [5]bool
	x uint16
}

func roundTrip[T any](t *testing.T, vs []T) {
	t.Helper()
	c, err := For[T]()
	if err != nil {
		t.Fatal(err)
	}
	enc := c.Append(nil, vs)
	got, err := c.Decode(enc, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(vs) == 0 && len(got) == 0 {
		// ok
	} else if !reflect.DeepEqual(got, vs) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, vs)
	}
	if !hasMap(reflect.TypeFor[T]()) {
		if again := c.Append(nil, got); !bytes.Equal(again, enc) {
			t.Fatalf("re-encoding differs:\n% x\n% x", again, enc)
		}
	}
	// Append to a prefix, twice: the batches concatenate and so do the
	// values, appended to what vs held.
	two := c.Append(c.Append([]byte("x"), vs), vs)[1:]
	prior := make([]T, 1, 1+2*len(vs))
	got2, err := c.Decode(two, prior)
	if err != nil {
		t.Fatalf("decode two batches: %v", err)
	}
	if len(got2) != 1+2*len(vs) {
		t.Fatalf("two batches: %d values, want %d", len(got2), 1+2*len(vs))
	}
	// Every strict prefix is an error, and leaves vs as it was (for long
	// encodings, a sample of them).
	for n := 1; n < len(enc); n += 1 + n/4096 {
		out, err := c.Decode(enc[:n], prior)
		if err == nil {
			t.Fatalf("prefix %d of %d decoded without error", n, len(enc))
		}
		if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "codec: ") {
			t.Fatalf("prefix %d: error %v", n, err)
		}
		if len(out) != 1 {
			t.Fatalf("prefix %d: %d values after an error, want 1", n, len(out))
		}
	}
}

func hasMap(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return hasMap(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasMap(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

func rich(i int) Rich {
	s := "pp" + strings.Repeat("x", i)
	return Rich{
		Embedded: Embedded{E1: uint64(i) << 40, e2: "embedded"},
		Inner:    &Inner{A: -3, B: "inner", c: [3]uint8{1, 2, 3}},
		Name:     "name" + strings.Repeat("é", i), age: -i * 1000,
		Tags: []string{"a", "", "ccc"}, Nums: []int64{math.MinInt64, -1, 0, 1, math.MaxInt64},
		Floats: []float64{1.5, math.Inf(-1)},
		Arr:    [2]Inner{{A: 1}, {B: "b"}}, Matrix: [2][3]int32{{1, 2, 3}, {-4, -5, math.MinInt32}},
		P: ptr(int64(-7)), PP: &[]*string{&s}[0],
		M:     map[string]int32{"x": 1, "y": -2},
		MS:    map[int]Inner{-1: {A: 9, B: "nine"}},
		Bytes: []byte{0, 255}, Empty: []int{},
		Flag: i%2 == 0, F32: -0.5, C128: complex(1, -2), Named: -42,
		Nested:  struct{ X, Y []Inner }{X: []Inner{{A: 5}}},
		private: struct{ u uint8 }{u: 200},
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"string", func(t *testing.T) { roundTrip(t, []string{"", "a", strings.Repeat("z", 300), "日本"}) }},
		{"bytes", func(t *testing.T) { roundTrip(t, [][]byte{nil, {}, {1, 2, 3}, bytes.Repeat([]byte{7}, 200)}) }},
		{"bool", func(t *testing.T) { roundTrip(t, []bool{true, false, true}) }},
		{"int", func(t *testing.T) { roundTrip(t, []int{math.MinInt, -1, 0, 1, math.MaxInt}) }},
		{"int8", func(t *testing.T) { roundTrip(t, []int8{math.MinInt8, -1, 0, math.MaxInt8}) }},
		{"int16", func(t *testing.T) { roundTrip(t, []int16{math.MinInt16, 0, math.MaxInt16}) }},
		{"int32", func(t *testing.T) { roundTrip(t, []int32{math.MinInt32, 0, math.MaxInt32}) }},
		{"int64", func(t *testing.T) { roundTrip(t, []int64{math.MinInt64, 0, math.MaxInt64}) }},
		{"uint", func(t *testing.T) { roundTrip(t, []uint{0, math.MaxUint}) }},
		{"uint8", func(t *testing.T) { roundTrip(t, []uint8{0, 255}) }},
		{"uint16", func(t *testing.T) { roundTrip(t, []uint16{0, math.MaxUint16}) }},
		{"uint32", func(t *testing.T) { roundTrip(t, []uint32{0, math.MaxUint32}) }},
		{"uint64", func(t *testing.T) { roundTrip(t, []uint64{0, math.MaxUint64}) }},
		{"uintptr", func(t *testing.T) { roundTrip(t, []uintptr{0, 1 << 20}) }},
		{"float32", func(t *testing.T) { roundTrip(t, []float32{0, -1.25, math.MaxFloat32, float32(math.Inf(1))}) }},
		{"float64", func(t *testing.T) { roundTrip(t, []float64{0, math.SmallestNonzeroFloat64, math.Inf(-1)}) }},
		{"complex", func(t *testing.T) { roundTrip(t, []complex64{complex(1, 2)}) }},
		{"named int", func(t *testing.T) { roundTrip(t, []MyInt{-1, 2}) }},
		{"named string", func(t *testing.T) { roundTrip(t, []MyStr{"a", ""}) }},
		{"named bytes", func(t *testing.T) { roundTrip(t, []MyBytes{nil, {}, {1}}) }},
		{"named byte slice", func(t *testing.T) { roundTrip(t, [][]MyByte{nil, {}, {1, 2}}) }},
		{"named float", func(t *testing.T) { roundTrip(t, []MyFloat{1.5}) }},
		{"named bool", func(t *testing.T) { roundTrip(t, []MyBool{true}) }},
		{"empty batch", func(t *testing.T) { roundTrip(t, []Rich{}) }},
		{"empty raw batch", func(t *testing.T) { roundTrip(t, []Flat(nil)) }},
		{"empty struct", func(t *testing.T) { roundTrip(t, []struct{}{{}, {}, {}}) }},
		{"no-data struct", func(t *testing.T) { roundTrip(t, []struct{ _ [0]func() }{{}, {}}) }},
		{"rich", func(t *testing.T) { roundTrip(t, []Rich{rich(0), rich(1), {}, rich(200)}) }},
		{"zero rich", func(t *testing.T) { roundTrip(t, []Rich{{}}) }},
		{"flat", func(t *testing.T) {
			roundTrip(t, []Flat{{ID: 1, User: 2, Amount: -3, On: true, F: 1.5, Arr: [3]int8{-1, 0, 1}}, {}})
		}},
		{"bools", func(t *testing.T) { roundTrip(t, []Bools{{A: true, B: [5]bool{true, false, true}, x: 9}}) }},
		{"partial", func(t *testing.T) {
			roundTrip(t, []Partial[string, int64]{{H: math.MaxUint64, K: "campaign-7", Start: 1e12, End: 1e12 + 1e4, Acc: 17}, {}})
		}},
		{"partial of struct", func(t *testing.T) {
			roundTrip(t, []Partial[[2]string, Inner]{{H: 3, K: [2]string{"a", "b"}, Acc: Inner{A: 1, B: "x"}}})
		}},
		{"keyed", func(t *testing.T) {
			roundTrip(t, []Keyed[string, Rich]{{H: 1, TS: -5, K: "k", V: rich(3)}, {}})
		}},
		{"keyed flat", func(t *testing.T) {
			roundTrip(t, []Keyed[int64, Flat]{{H: 1, TS: 2, K: 3, V: Flat{ID: 4}}})
		}},
		{"anonymous", func(t *testing.T) {
			roundTrip(t, []struct {
				H          uint64
				K          string
				Start, End int64
				Acc        int64
			}{{H: 1, K: "k", Start: 2, End: 3, Acc: 4}})
		}},
		{"pointer", func(t *testing.T) { roundTrip(t, []*Inner{nil, {A: 1}}) }},
		{"slice of slices", func(t *testing.T) { roundTrip(t, [][]string{nil, {}, {"a"}}) }},
		{"map", func(t *testing.T) { roundTrip(t, []map[string][]int{nil, {}, {"a": {1}, "b": nil}}) }},
		{"array of strings", func(t *testing.T) { roundTrip(t, [][3]string{{"a", "b", "c"}}) }},
		{"slice of empty", func(t *testing.T) { roundTrip(t, [][]struct{}{nil, {}, make([]struct{}, 5)}) }},
		{"map of empty", func(t *testing.T) { roundTrip(t, []map[struct{}]struct{}{{}, {{}: {}}}) }},
		{"body longer than estimated", func(t *testing.T) {
			roundTrip(t, []Inner{{}, {B: strings.Repeat("x", 1<<15)}, {B: strings.Repeat("y", 1<<20)}})
		}},
		{"body shorter than estimated", func(t *testing.T) {
			roundTrip(t, []Inner{{B: strings.Repeat("x", 1<<15)}, {}, {}, {}, {}})
		}},
		{"strings longer than 127", func(t *testing.T) {
			roundTrip(t, []MyStr{MyStr(strings.Repeat("x", 1<<15)), "", MyStr(strings.Repeat("y", 1<<20))})
		}},
		{"floats slice", func(t *testing.T) { roundTrip(t, [][]float32{{1, 2}}) }},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestNaN(t *testing.T) {
	c, _ := For[Flat]()
	vs := []Flat{{F: float32(math.NaN())}}
	got, err := c.Decode(c.Append(nil, vs), nil)
	if err != nil || math.Float32bits(got[0].F) != math.Float32bits(vs[0].F) {
		t.Fatalf("NaN: %v %v", got, err)
	}
}

func TestCodecKinds(t *testing.T) {
	check := func(c any, want string) {
		t.Helper()
		if got := reflect.TypeOf(c).String(); !strings.HasPrefix(got, want) {
			t.Errorf("codec %s, want %s", got, want)
		}
	}
	check(must(For[int64]()), "*codec.rawCodec")
	check(must(For[MyFloat]()), "*codec.rawCodec")
	check(must(For[Flat]()), "*codec.rawCodec")
	check(must(For[[4]bool]()), "*codec.rawCodec")
	check(must(For[MyStr]()), "*codec.stringCodec")
	check(must(For[Partial[string, int64]]()), "*codec.compiledCodec")
}

func must[T any](c Codec[T], err error) Codec[T] {
	if err != nil {
		panic(err)
	}
	return c
}

func TestDecodeIntoReusedSlice(t *testing.T) {
	c, _ := For[Rich]()
	buf := c.Append(nil, []Rich{rich(1), rich(2)})
	vs := make([]Rich, 0, 8)
	vs = append(vs, rich(9), rich(9), rich(9))
	vs = vs[:0]
	got, err := c.Decode(buf, vs)
	if err != nil || !reflect.DeepEqual(got, []Rich{rich(1), rich(2)}) {
		t.Fatalf("decode into reused slice: %v", err)
	}
}

func TestPadding(t *testing.T) {
	// Padding is zeroed: the same values encode to the same bytes
	// whatever the padding held.
	c, _ := For[Flat]()
	a := []Flat{{ID: 1, User: 2}}
	b := []Flat{{ID: 1, User: 2}}
	pad := unsafe.Offsetof(b[0].User) + 4
	if pad == unsafe.Offsetof(b[0].Amount) {
		t.Skip("no padding after Flat.User on this platform")
	}
	raw := (*[24]byte)(unsafe.Pointer(&b[0]))
	raw[pad], raw[pad+1] = 0xAA, 0xBB
	if ea, eb := c.Append(nil, a), c.Append(nil, b); !bytes.Equal(ea, eb) {
		t.Fatalf("padding leaked:\n% x\n% x", ea, eb)
	}
}

// TestWordsNode checks the big-endian hosts' number encoding against the
// little-endian one: on a little-endian host both give the same bytes.
func TestWordsNode(t *testing.T) {
	if !littleEndian {
		t.Skip("big-endian host")
	}
	vals := [4]uint64{0x0102030405060708, 0xfffefdfcfbfaf9f8, 1, 0}
	for _, c := range []struct {
		size uintptr
		word int
	}{{2, 2}, {4, 4}, {8, 8}, {8, 4}, {16, 8}} {
		w, r := wordsNode("n", c.size, c.word), runNode("n", c.size)
		p := unsafe.Pointer(&vals)
		ew, er := w.enc(nil, p), r.enc(nil, p)
		if !bytes.Equal(ew, er) {
			t.Fatalf("%+v: encodings differ: % x, % x", c, ew, er)
		}
		var out [4]uint64
		d := decoder{b: ew}
		if err := w.dec(&d, unsafe.Pointer(&out)); err != nil || d.pos != len(ew) {
			t.Fatalf("%+v: decode: %v", c, err)
		}
		if !bytes.Equal(r.enc(nil, unsafe.Pointer(&out)), er) {
			t.Fatalf("%+v: round trip differs", c)
		}
		if err := w.dec(&decoder{b: ew[:len(ew)-1]}, unsafe.Pointer(&out)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%+v: truncated: %v", c, err)
		}
	}
}
