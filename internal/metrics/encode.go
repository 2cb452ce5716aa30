package metrics

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/bin"
)

// The encoding of a ProcessStats: magic "WM", a version byte, a flags
// byte (1: final), then the fields as varints, with the operator names
// once in a string table that instances and loads index.
const (
	encMagic   = "WM"
	encVersion = 2
	// Bounds a decoder checks before it allocates.
	maxStrings   = 1 << 12
	maxStringLen = 1 << 10
	maxList      = 1 << 16
	maxGroups    = 1 << 20
)

// Encode appends the encoding of ps to b.
func Encode(b []byte, ps ProcessStats) []byte {
	w := writer{b: append(b, encMagic...)}
	var flags byte
	if ps.Final {
		flags = 1
	}
	w.b = append(w.b, encVersion, flags)
	names, index := stringTable(ps)
	w.u(uint64(len(names)))
	for _, s := range names {
		w.str(s)
	}
	w.u(uint64(ps.Process))
	w.i(ps.Time, int64(ps.Epoch), ps.Watermark, int64(ps.WatermarkLag), ps.Records)
	l := ps.Latency
	w.i(l.Count, int64(l.P50), int64(l.P90), int64(l.P99), int64(l.P999), int64(l.Max), int64(l.Sum))
	w.u(uint64(len(ps.Instances)))
	for _, in := range ps.Instances {
		w.u(uint64(index[in.Operator]))
		w.i(int64(in.Instance), int64(in.Process), b2i(in.Source)|b2i(in.Running)<<1|b2i(in.KnowsBacklog)<<2, in.RecordsIn, in.RecordsOut, in.BytesIn, in.BytesOut,
			int64(in.Useful), int64(in.Idle), int64(in.Backpressure), int64(in.Lifetime), int64(in.Queue), in.Backlog,
			int64(in.Epoch), in.Watermark, int64(in.KeyGroupLo))
		w.list(in.KeyGroups)
	}
	w.u(uint64(len(ps.Peers)))
	for _, p := range ps.Peers {
		w.i(int64(p.Peer), p.BytesOut, p.FramesOut, p.BytesIn, p.FramesIn, int64(p.CreditWait))
	}
	w.u(uint64(len(ps.Checkpoints)))
	for _, c := range ps.Checkpoints {
		w.i(int64(c.ID), int64(c.Epoch), c.Start, int64(c.Duration), int64(c.Alignment), c.Bytes, b2i(c.Complete))
	}
	w.u(uint64(len(ps.Loads)))
	for _, l := range ps.Loads {
		w.u(uint64(index[l.Operator]))
		w.list(l.Counts)
	}
	return w.b
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// stringTable lists the operator names of ps once each.
func stringTable(ps ProcessStats) ([]string, map[string]int) {
	index := map[string]int{}
	var names []string
	add := func(s string) {
		if _, ok := index[s]; !ok {
			index[s] = len(names)
			names = append(names, s)
		}
	}
	for _, in := range ps.Instances {
		add(in.Operator)
	}
	for _, l := range ps.Loads {
		add(l.Operator)
	}
	return names, index
}

type writer struct{ b []byte }

func (w *writer) u(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *writer) i(vs ...int64) {
	for _, v := range vs {
		w.b = binary.AppendVarint(w.b, v)
	}
}

func (w *writer) str(s string) {
	w.u(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) list(vs []int64) {
	w.u(uint64(len(vs)))
	w.i(vs...)
}

// reader reads a summary's fields with a sticky error (bin.Decoder),
// naming the offset of the first bad one.
type reader struct {
	bin.Decoder
	size int // of the whole message
	err  error
}

// off is the offset of the next field.
func (r *reader) off() int { return r.size - len(r.B) }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("%w at offset %d", err, r.off())
	}
}

func (r *reader) u() uint64 { return r.check(r.Uvarint()) }

func (r *reader) i() int64 { return int64(r.check(uint64(r.Varint()))) }

// check turns the decoder's first error into the reader's, with its
// offset, and passes v on.
func (r *reader) check(v uint64) uint64 {
	if r.Decoder.Err != nil {
		r.fail(fmt.Errorf("metrics: summary cut short: %w", r.Decoder.Err))
		return 0
	}
	if r.err != nil {
		return 0
	}
	return v
}

// count reads a length of at most limit elements, each at least one byte
// long, so that no allocation outgrows the input.
func (r *reader) count(limit int) int {
	n := r.u()
	if r.err == nil && (n > uint64(limit) || n > uint64(len(r.B))) {
		r.fail(fmt.Errorf("metrics: a count of %d is out of range", n))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *reader) str() string {
	n := r.count(maxStringLen)
	s := string(r.B[:n])
	r.B = r.B[n:]
	return s
}

func (r *reader) list(limit int) []int64 {
	n := r.count(limit)
	if n == 0 {
		return nil
	}
	vs := make([]int64, n)
	for k := range vs {
		vs[k] = r.i()
	}
	return vs
}

func (r *reader) name(names []string) string {
	k := r.u()
	if r.err == nil && k >= uint64(len(names)) {
		r.fail(fmt.Errorf("metrics: operator %d of %d", k, len(names)))
	}
	if r.err != nil {
		return ""
	}
	return names[k]
}

func (r *reader) d() time.Duration { return time.Duration(r.i()) }
