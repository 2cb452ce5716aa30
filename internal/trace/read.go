package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
)

// Trace is a decoded trace file, or several merged: the workers and
// operators events index into, and the events with absolute times (Unix
// ns).
type Trace struct {
	Process, Processes int
	Base               int64
	Workers            []Worker
	Ops                []string
	Events             []Event
}

// ErrTruncated is what decoding a file cut short returns (wrapped, with
// the trace of its whole blocks).
var ErrTruncated = errors.New("cut short: no end mark")

// FormatError is a decoding error: the file (if known), the byte offset
// at which the bad data starts, and what is wrong.
type FormatError struct {
	File   string
	Offset int64
	Err    error
}

func (e *FormatError) Error() string {
	f := "trace"
	if e.File != "" {
		f = "trace " + e.File
	}
	return fmt.Sprintf("%s: offset %d: %v", f, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ReadFile decodes the trace file at path. A file cut short returns its
// whole blocks with an error wrapping ErrTruncated.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Decode(f)
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.File = path
	}
	return t, err
}

// Decode reads a trace from r. It allocates in proportion to the bytes
// it reads, whatever the counts in them claim.
func Decode(r io.Reader) (*Trace, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 64<<10), t: &Trace{}}
	err := d.run()
	if err != errDone {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = ErrTruncated
		}
		return d.t, &FormatError{Offset: d.at, Err: err}
	}
	return d.t, nil
}

type decoder struct {
	r   *bufio.Reader
	off int64 // bytes consumed
	at  int64 // where the item being read starts
	t   *Trace
}

func (d *decoder) ReadByte() (byte, error) {
	b, err := d.r.ReadByte()
	if err == nil {
		d.off++
	}
	return b, err
}

func (d *decoder) uvarint(limit uint64, what string) (uint64, error) {
	v, err := binary.ReadUvarint(d)
	if err == nil && v > limit {
		err = fmt.Errorf("%s %d is over %d", what, v, limit)
	}
	return v, err
}

func (d *decoder) header() error {
	var h [len(magic) + 1]byte
	n, err := io.ReadFull(d.r, h[:])
	d.off += int64(n)
	if err != nil {
		if n == 0 {
			return errors.New("empty file, not a trace")
		}
		return err
	}
	if string(h[:len(magic)]) != magic {
		return errors.New("not a trace file (bad magic)")
	}
	if h[len(magic)] != version {
		return fmt.Errorf("trace version %d, want %d", h[len(magic)], version)
	}
	d.at = d.off
	p, err := d.uvarint(maxTable, "process")
	if err != nil {
		return err
	}
	ps, err := d.uvarint(maxTable, "processes")
	if err != nil {
		return err
	}
	if p >= ps {
		return fmt.Errorf("process %d of %d", p, ps)
	}
	d.t.Process, d.t.Processes = int(p), int(ps)
	d.t.Base, err = binary.ReadVarint(d)
	return err
}

// errDone is run's return when the file ended well.
var errDone = errors.New("done")

// run decodes the whole file.
func (d *decoder) run() error {
	if err := d.header(); err != nil {
		return err
	}
	for {
		d.at = d.off
		tag, err := d.ReadByte()
		if err != nil {
			return ErrTruncated
		}
		switch tag {
		case tagBlock:
			err = d.block()
		case tagEnd:
			err = d.end()
		default:
			err = fmt.Errorf("unknown block tag 0x%02x", tag)
		}
		if err != nil {
			return err
		}
	}
}

func (d *decoder) end() error {
	n, err := binary.ReadUvarint(d)
	if err != nil {
		return err
	}
	if n != uint64(len(d.t.Events)) {
		return fmt.Errorf("end mark counts %d events, the file holds %d", n, len(d.t.Events))
	}
	d.at = d.off
	if _, err := d.r.ReadByte(); err != io.EOF {
		return errors.New("data after the end mark")
	}
	return errDone
}

func (d *decoder) block() error {
	n, err := d.uvarint(maxPayload, "block length")
	if err != nil {
		return err
	}
	start := d.off
	p, err := io.ReadAll(io.LimitReader(d.r, int64(n)+4))
	d.off += int64(len(p))
	if err != nil {
		return err
	}
	if len(p) < int(n)+4 {
		return io.ErrUnexpectedEOF
	}
	p, sum := p[:n], binary.LittleEndian.Uint32(p[n:])
	if crc32.ChecksumIEEE(p) != sum {
		return errors.New("block checksum mismatch")
	}
	b := &payload{p: p, base: start}
	if err := d.tables(b); err != nil {
		d.at = b.base + int64(b.i)
		return err
	}
	if err := d.events(b); err != nil {
		d.at = b.base + int64(b.i)
		return err
	}
	if b.i != len(p) {
		d.at = b.base + int64(b.i)
		return errors.New("block has bytes after its events")
	}
	return nil
}

// payload is a block's bytes being decoded; base is its offset in the
// file.
type payload struct {
	p    []byte
	i    int
	base int64
}

func (b *payload) uvarint(limit uint64, what string) (uint64, error) {
	v, n := binary.Uvarint(b.p[b.i:])
	if n <= 0 {
		return 0, fmt.Errorf("bad %s", what)
	}
	if v > limit {
		return 0, fmt.Errorf("%s %d is over %d", what, v, limit)
	}
	b.i += n
	return v, nil
}

func (b *payload) varint(what string) (int64, error) {
	v, n := binary.Varint(b.p[b.i:])
	if n <= 0 {
		return 0, fmt.Errorf("bad %s", what)
	}
	b.i += n
	return v, nil
}

func (b *payload) string() (string, error) {
	n, err := b.uvarint(maxName, "name length")
	if err != nil {
		return "", err
	}
	if int(n) > len(b.p)-b.i {
		return "", errors.New("name runs past the block")
	}
	s := string(b.p[b.i : b.i+int(n)])
	b.i += int(n)
	return s, nil
}

func (d *decoder) tables(b *payload) error {
	nw, err := b.uvarint(uint64(min(maxTable, len(b.p)/4)), "worker count")
	if err != nil {
		return err
	}
	if len(d.t.Workers)+int(nw) > maxTable {
		return fmt.Errorf("more than %d workers", maxTable)
	}
	for range nw {
		var w Worker
		if w.Name, err = b.string(); err != nil {
			return err
		}
		var v [3]uint64
		for k, what := range []string{"worker process", "worker instance", "worker operator"} {
			if v[k], err = b.uvarint(maxTable, what); err != nil {
				return err
			}
		}
		w.Process, w.Instance, w.Op = int(v[0]), int(v[1]), uint16(min(v[2], math.MaxUint16))
		d.t.Workers = append(d.t.Workers, w)
	}
	no, err := b.uvarint(uint64(min(math.MaxUint16+1, len(b.p))), "operator count")
	if err != nil {
		return err
	}
	if len(d.t.Ops)+int(no) > math.MaxUint16+1 {
		return errors.New("more than 65536 operators")
	}
	for range no {
		s, err := b.string()
		if err != nil {
			return err
		}
		d.t.Ops = append(d.t.Ops, s)
	}
	for _, w := range d.t.Workers[len(d.t.Workers)-int(nw):] {
		if int(w.Op) >= len(d.t.Ops) {
			return fmt.Errorf("worker %s has operator %d of %d", w.Name, w.Op, len(d.t.Ops))
		}
	}
	return nil
}

func (d *decoder) events(b *payload) error {
	n, err := b.uvarint(uint64((len(b.p)-b.i)/minEvent), "event count")
	if err != nil {
		return err
	}
	d.t.Events = slices.Grow(d.t.Events, int(n))
	prev := d.t.Base
	for range n {
		at := b.i
		e, err := d.event(b, prev)
		if err != nil {
			b.i = at
			return err
		}
		d.t.Events = append(d.t.Events, e)
		prev = e.Start
	}
	return nil
}

func (d *decoder) event(b *payload, prev int64) (Event, error) {
	var e Event
	w, err := b.uvarint(uint64(len(d.t.Workers)), "worker")
	if err != nil || w == uint64(len(d.t.Workers)) {
		return e, fmt.Errorf("event of worker %d, of %d in the table", w, len(d.t.Workers))
	}
	if b.i >= len(b.p) {
		return e, errors.New("event cut short")
	}
	k := b.p[b.i]
	b.i++
	if Kind(k&^edgeBit) >= numKinds {
		return e, fmt.Errorf("unknown event kind %d", k&^edgeBit)
	}
	op, err := b.uvarint(uint64(len(d.t.Ops)), "operator")
	if err != nil || op == uint64(len(d.t.Ops)) {
		return e, fmt.Errorf("event of operator %d, of %d in the table", op, len(d.t.Ops))
	}
	delta, err := b.varint("start")
	if err != nil {
		return e, err
	}
	dur, err := b.uvarint(math.MaxInt64/4, "duration")
	if err != nil {
		return e, err
	}
	if delta > 0 && prev > math.MaxInt64/2-delta || delta < 0 && prev < math.MinInt64/2-delta {
		return e, errors.New("start time out of range")
	}
	e = Event{Worker: uint32(w), Kind: Kind(k &^ edgeBit), Op: uint16(op), Start: prev + delta}
	if e.Start > math.MaxInt64-int64(dur) {
		return e, errors.New("end time out of range")
	}
	e.End = e.Start + int64(dur)
	if k&edgeBit != 0 {
		if e.Channel, err = b.uvarint(math.MaxUint64, "channel"); err != nil {
			return e, err
		}
		if e.Seq, err = b.uvarint(math.MaxUint64, "seq"); err != nil {
			return e, err
		}
	}
	return e, nil
}
