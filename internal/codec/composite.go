package codec

import (
	"fmt"
	"reflect"
	"unsafe"
)

// sliceNode: uvarint length+1 (0 for nil), then the elements; a slice of
// flat elements is copied in one go.
func (c *compiler) sliceNode(t reflect.Type, path string) (*node, error) {
	e, err := c.compile(t.Elem(), path+"[0]")
	if err != nil {
		return nil, err
	}
	es := t.Elem().Size()
	n := &node{size: t.Size(), min: 1, alias: e.alias, desc: "[]" + e.desc}
	n.enc = func(b []byte, p unsafe.Pointer) []byte {
		h := (*sliceHeader)(p)
		if h.data == nil {
			return append(b, 0)
		}
		b = appendUvarint(b, uint64(h.len)+1)
		if e.flat {
			return append(b, unsafe.Slice((*byte)(h.data), uintptr(h.len)*es)...)
		}
		for i := range h.len {
			b = e.enc(b, unsafe.Add(h.data, uintptr(i)*es))
		}
		return b
	}
	n.dec = func(d *decoder, p unsafe.Pointer) error {
		v, err := d.uvarint()
		if err != nil {
			return err
		}
		if v == 0 {
			*(*sliceHeader)(p) = sliceHeader{}
			return nil
		}
		if err := checkCount(v-1, e.min, d.remaining()); err != nil {
			return err
		}
		cnt := int(v - 1)
		data := reflect.MakeSlice(t, cnt, cnt).UnsafePointer()
		switch {
		case e.flat:
			nb := cnt * int(es)
			copy(unsafe.Slice((*byte)(data), nb), d.b[d.pos:])
			d.pos += nb
		case e.min > 0:
			for i := range cnt {
				if err := e.dec(d, unsafe.Add(data, uintptr(i)*es)); err != nil {
					return err
				}
			}
		}
		*(*sliceHeader)(p) = sliceHeader{data: data, len: cnt, cap: cnt}
		return nil
	}
	return n, nil
}

// arrayNode: the elements in order; an array of flat elements is flat.
func (c *compiler) arrayNode(t reflect.Type, path string) (*node, error) {
	e, err := c.compile(t.Elem(), path+"[0]")
	if err != nil {
		return nil, err
	}
	desc := fmt.Sprintf("[%d]%s", t.Len(), e.desc)
	if e.flat {
		return runNode(desc, t.Size()), nil
	}
	l, es := t.Len(), t.Elem().Size()
	return &node{
		size: t.Size(), min: satMul(e.min, l), alias: e.alias, desc: desc,
		enc: func(b []byte, p unsafe.Pointer) []byte {
			for i := range l {
				b = e.enc(b, unsafe.Add(p, uintptr(i)*es))
			}
			return b
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			for i := range l {
				if err := e.dec(d, unsafe.Add(p, uintptr(i)*es)); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

// pointerNode: 0 for nil, else 1 and the pointee. Decoding allocates a
// fresh pointee for each non-nil pointer (aliasing is not preserved).
func (c *compiler) pointerNode(t reflect.Type, path string) (*node, error) {
	et := t.Elem()
	e, err := c.compile(et, path)
	if err != nil {
		return nil, err
	}
	return &node{
		size: t.Size(), min: 1, alias: e.alias, desc: "*" + e.desc,
		enc: func(b []byte, p unsafe.Pointer) []byte {
			q := *(*unsafe.Pointer)(p)
			if q == nil {
				return append(b, 0)
			}
			return e.enc(append(b, 1), q)
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			c, err := d.byte()
			if err != nil {
				return err
			}
			switch c {
			case 0:
				*(*unsafe.Pointer)(p) = nil
			case 1:
				q := reflect.New(et).UnsafePointer()
				if err := e.dec(d, q); err != nil {
					return err
				}
				*(*unsafe.Pointer)(p) = q
			default:
				return malformed("pointer flag %#x", c)
			}
			return nil
		},
	}, nil
}

// mapNode: uvarint length+1 (0 for nil), then key, value pairs in map
// iteration order (so not deterministic).
func (c *compiler) mapNode(t reflect.Type, path string) (*node, error) {
	kt, vt := t.Key(), t.Elem()
	k, err := c.compile(kt, path+"{key}")
	if err != nil {
		return nil, err
	}
	v, err := c.compile(vt, path+"[key]")
	if err != nil {
		return nil, err
	}
	entry := satAdd(k.min, v.min)
	return &node{
		size: t.Size(), min: 1, alias: k.alias || v.alias,
		desc: "map[" + k.desc + "]" + v.desc,
		enc: func(b []byte, p unsafe.Pointer) []byte {
			m := reflect.NewAt(t, p).Elem()
			if m.IsNil() {
				return append(b, 0)
			}
			b = appendUvarint(b, uint64(m.Len())+1)
			kp, vp := reflect.New(kt), reflect.New(vt)
			kv, vv := kp.Elem(), vp.Elem()
			for it := m.MapRange(); it.Next(); {
				kv.SetIterKey(it)
				vv.SetIterValue(it)
				b = k.enc(b, kp.UnsafePointer())
				b = v.enc(b, vp.UnsafePointer())
			}
			return b
		},
		dec: func(d *decoder, p unsafe.Pointer) error {
			n, err := d.uvarint()
			if err != nil {
				return err
			}
			dst := reflect.NewAt(t, p).Elem()
			if n == 0 {
				dst.SetZero()
				return nil
			}
			n--
			if entry == 0 && n > 1 {
				return malformed("%d entries in a map of empty keys and values", n)
			}
			if err := checkCount(n, entry, d.remaining()); err != nil {
				return err
			}
			m := reflect.MakeMapWithSize(t, int(n))
			kp, vp := reflect.New(kt), reflect.New(vt)
			for range n {
				if err := k.dec(d, kp.UnsafePointer()); err != nil {
					return err
				}
				if err := v.dec(d, vp.UnsafePointer()); err != nil {
					return err
				}
				m.SetMapIndex(kp.Elem(), vp.Elem())
			}
			dst.Set(m)
			return nil
		},
	}, nil
}
