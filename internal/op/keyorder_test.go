package op

import (
	"math"
	"testing"
)

type named string

type pairKey struct {
	Name string
	N    int
	neg  int8
}

func TestKeyOrder(t *testing.T) {
	check := func(name string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d; want %d", name, got, want)
		}
	}
	check(`string "b" vs "a"`, keyOrder[string]()("b", "a"), 1)
	check(`named "a" vs "b"`, keyOrder[named]()("a", "b"), -1)
	check("int -5 vs 3", keyOrder[int]()(-5, 3), -1)
	check("int8 -1 vs -1", keyOrder[int8]()(-1, -1), 0)
	check("uint64 max vs 1", keyOrder[uint64]()(math.MaxUint64, 1), 1)
	check("uint16 2 vs 300", keyOrder[uint16]()(2, 300), -1)
	check("float64 -0.5 vs 0.25", keyOrder[float64]()(-0.5, 0.25), -1)
	check("bool true vs false", keyOrder[bool]()(true, false), 1)
	pk := keyOrder[pairKey]()
	check("struct by first field", pk(pairKey{"a", 9, 0}, pairKey{"b", 1, 0}), -1)
	check("struct by second field, numerically", pk(pairKey{"a", 10, 0}, pairKey{"a", 9, 0}), 1)
	check("struct by unexported field", pk(pairKey{"a", 1, -1}, pairKey{"a", 1, 2}), -1)
	check("struct equal", pk(pairKey{"a", 1, 2}, pairKey{"a", 1, 2}), 0)
	check("array", keyOrder[[2]int32]()([2]int32{1, -4}, [2]int32{1, -3}), -1)
	check("empty struct", keyOrder[Unit]()(Unit{}, Unit{}), 0)
	a, b := 1, 2
	if c := keyOrder[*int]()(&a, &b); c != keyOrder[*int]()(&a, &b) || keyOrder[*int]()(&a, &a) != 0 {
		t.Errorf("pointers are not ordered consistently")
	}
}
