package op

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// keyOrder returns a total order of the keys of type K that is the same
// in every process and run: strings, integers, floats and bools (and
// named types over them) by value, structs field by field and arrays
// element by element in that order, other keys (pointers, interfaces,
// channels) by their %v text. It breaks ties between equal values in
// TopN and ArgMax.
func keyOrder[K comparable]() func(a, b K) int {
	t := reflect.TypeFor[K]()
	if f := scalarOrder[K](t.Kind()); f != nil {
		return f
	}
	return func(a, b K) int {
		return compareValues(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem())
	}
}

// scalarOrder is keyOrder for keys of a scalar kind, read without
// reflection; nil for other kinds.
func scalarOrder[K any](k reflect.Kind) func(a, b K) int {
	switch k {
	case reflect.String:
		return ordered[K, string]()
	case reflect.Int, reflect.Int64:
		return ordered[K, int64]()
	case reflect.Int32:
		return ordered[K, int32]()
	case reflect.Int16:
		return ordered[K, int16]()
	case reflect.Int8:
		return ordered[K, int8]()
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return ordered[K, uint64]()
	case reflect.Uint32:
		return ordered[K, uint32]()
	case reflect.Uint16:
		return ordered[K, uint16]()
	case reflect.Uint8, reflect.Bool: // false < true
		return ordered[K, uint8]()
	case reflect.Float64:
		return ordered[K, float64]()
	case reflect.Float32:
		return ordered[K, float32]()
	}
	return nil
}

// ordered compares keys whose memory is a V.
func ordered[K any, V cmp.Ordered]() func(a, b K) int {
	return func(a, b K) int { return cmp.Compare(*(*V)(unsafe.Pointer(&a)), *(*V)(unsafe.Pointer(&b))) }
}

// compareValues is keyOrder over reflected values of one type.
func compareValues(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.String:
		return strings.Compare(a.String(), b.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float())
	case reflect.Bool:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	case reflect.Struct:
		for i := range a.NumField() {
			if c := compareValues(a.Field(i), b.Field(i)); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Array:
		for i := range a.Len() {
			if c := compareValues(a.Index(i), b.Index(i)); c != 0 {
				return c
			}
		}
		return 0
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
