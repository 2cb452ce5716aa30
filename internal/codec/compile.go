package codec

import (
	"reflect"
	"strings"
	"unsafe"
)

// encFn appends the encoding of the value at p to b.
type encFn func(b []byte, p unsafe.Pointer) []byte

// decFn decodes one value from d into the memory at p, overwriting all of
// it (decoders never read what was there, so p may hold garbage).
type decFn func(d *decoder, p unsafe.Pointer) error

// node is the compiled codec of one type.
type node struct {
	enc  encFn
	dec  decFn
	min  int     // minimum encoded size in bytes (saturating)
	size uintptr // size in memory
	// flat: the encoding is exactly the value's memory image and every
	// byte pattern is a valid value, so runs of flat values are copied.
	flat bool
	// alias: decoded values point into the batch body (strings, byte
	// slices), so the body is copied once per batch.
	alias  bool
	str    bool   // a string
	desc   string // canonical shape, hashed into the fingerprint
	isStrc bool   // a struct: ops holds its fields, flattened
	ops    []op
}

// op is a field of a flattened struct: a node at an offset.
type op struct {
	off uintptr
	n   *node
}

// compiler compiles one root type; active holds the composite types being
// compiled, to reject recursive types.
type compiler struct {
	active map[reflect.Type]bool
}

// compile compiles t into a node.
func compile(t reflect.Type) (*node, error) {
	c := compiler{active: map[reflect.Type]bool{}}
	return c.compile(t, typeName(t))
}

func (c *compiler) compile(t reflect.Type, path string) (*node, error) {
	switch t.Kind() {
	case reflect.Bool:
		return boolNode(), nil
	case reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Uint32,
		reflect.Int64, reflect.Uint64:
		return fixedNode(t.Kind().String(), t.Size(), int(t.Size())), nil
	case reflect.Int:
		return wordNode[int]("int64"), nil
	case reflect.Uint:
		return wordNode[uint]("uint64"), nil
	case reflect.Uintptr:
		return wordNode[uintptr]("uint64"), nil
	case reflect.Float32:
		return fixedNode("float32", 4, 4), nil
	case reflect.Float64:
		return fixedNode("float64", 8, 8), nil
	case reflect.Complex64:
		return fixedNode("complex64", 8, 4), nil
	case reflect.Complex128:
		return fixedNode("complex128", 16, 8), nil
	case reflect.String:
		return stringNode(), nil
	case reflect.Slice, reflect.Array, reflect.Pointer, reflect.Map, reflect.Struct:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return bytesNode(), nil
		}
		if t.Kind() == reflect.Array && (t.Len() == 0 || t.Size() == 0) {
			return &node{desc: "empty", enc: encEmpty, dec: decEmpty}, nil
		}
		if c.active[t] {
			return nil, unsupported(path, "recursive type "+t.String())
		}
		c.active[t] = true
		defer delete(c.active, t)
		switch t.Kind() {
		case reflect.Slice:
			return c.sliceNode(t, path)
		case reflect.Array:
			return c.arrayNode(t, path)
		case reflect.Pointer:
			return c.pointerNode(t, path)
		case reflect.Map:
			return c.mapNode(t, path)
		}
		return c.structNode(t, path)
	}
	return nil, unsupported(path, t.Kind().String()+" type")
}

func encEmpty(b []byte, _ unsafe.Pointer) []byte { return b }

func decEmpty(*decoder, unsafe.Pointer) error { return nil }

// structNode compiles a struct: its fields (exported or not, embedded or
// not) in declaration order, nested structs flattened into one list of
// offsets, and adjacent flat fields merged into one copy.
func (c *compiler) structNode(t reflect.Type, path string) (*node, error) {
	n := &node{size: t.Size(), isStrc: true}
	descs := make([]string, 0, t.NumField())
	var ops []op
	for i := range t.NumField() {
		f := t.Field(i)
		fn, err := c.compile(f.Type, path+"."+f.Name)
		if err != nil {
			return nil, err
		}
		descs = append(descs, fn.desc)
		n.min = satAdd(n.min, fn.min)
		n.alias = n.alias || fn.alias
		switch {
		case f.Type.Size() == 0:
			// Holds no data.
		case fn.isStrc:
			for _, o := range fn.ops {
				ops = append(ops, op{off: f.Offset + o.off, n: o.n})
			}
		default:
			ops = append(ops, op{off: f.Offset, n: fn})
		}
	}
	n.ops = mergeRuns(ops)
	n.desc = "struct{" + strings.Join(descs, ";") + "}"
	n.flat = len(n.ops) == 1 && n.ops[0].off == 0 && n.ops[0].n.flat && n.ops[0].n.size == t.Size()
	n.enc, n.dec = structFns(n.ops)
	return n, nil
}

// mergeRuns merges adjacent flat ops that are contiguous in memory.
func mergeRuns(ops []op) []op {
	var out []op
	for _, o := range ops {
		if k := len(out) - 1; k >= 0 && o.n.flat && out[k].n.flat && out[k].off+out[k].n.size == o.off {
			out[k].n = runNode("run", out[k].n.size+o.n.size)
			continue
		}
		out = append(out, o)
	}
	return out
}
