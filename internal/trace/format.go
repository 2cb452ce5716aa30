package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// The trace file format. A file is a header then blocks, then an end
// mark:
//
//	header: magic "WEIRTRC" (7 bytes), version (1 byte), then uvarints
//	        process, processes, and a zigzag varint base time (Unix ns).
//	block:  'B', uvarint payload length, payload, CRC-32 (IEEE, 4 bytes
//	        little endian) of the payload.
//	end:    'Z', uvarint number of events in the file.
//
// A block's payload first extends the tables (uvarint count of new
// workers, each: string name, uvarints process, instance, op; uvarint
// count of new operators, each a string; a string is a uvarint length
// and its bytes), then holds events (uvarint count, each: uvarint
// worker, kind byte with bit 7 set when a message edge follows, uvarint
// op, zigzag varint start relative to the previous event's start in the
// block (the first to the base), uvarint duration, and with bit 7
// uvarints channel and seq). Tables only grow, so a block holds the
// entries added since the one before. A file without its end mark was cut
// short (a process that died): its whole blocks are still read.
const (
	magic   = "WEIRTRC"
	version = 1

	tagBlock = 'B'
	tagEnd   = 'Z'
	edgeBit  = 0x80

	// Limits the decoder enforces before allocating.
	maxName    = 4096
	maxPayload = 64 << 20
	maxTable   = 1 << 20
	minEvent   = 5 // bytes of the smallest encoded event
)

// Writer writes a trace file, block by block, through a buffer.
type Writer struct {
	w      *bufio.Writer
	base   int64
	nw, no int // table entries written
	events int64
	buf    []byte
	err    error
	closed bool
}

// NewWriter writes the header of a trace of process (of processes) to w,
// with times relative to base (Unix ns).
func NewWriter(w io.Writer, process, processes int, base int64) *Writer {
	tw := &Writer{w: bufio.NewWriterSize(w, 256<<10), base: base}
	h := append([]byte(magic), version)
	h = binary.AppendUvarint(h, uint64(process))
	h = binary.AppendUvarint(h, uint64(processes))
	h = binary.AppendVarint(h, base)
	_, tw.err = tw.w.Write(h)
	return tw
}

// Write writes one block: the entries of workers and ops not written yet
// (the tables as the Tracer has them, which only grow) and events, whose
// workers and ops must be in the tables. An event that ends before it
// starts is written as ending where it starts.
func (w *Writer) Write(workers []Worker, ops []string, events []Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: write after close")
	}
	if len(workers) == w.nw && len(ops) == w.no && len(events) == 0 {
		return nil
	}
	p := w.buf[:0]
	p = binary.AppendUvarint(p, uint64(len(workers)-w.nw))
	for _, wk := range workers[w.nw:] {
		p = appendString(p, wk.Name)
		p = binary.AppendUvarint(p, uint64(wk.Process))
		p = binary.AppendUvarint(p, uint64(wk.Instance))
		p = binary.AppendUvarint(p, uint64(wk.Op))
	}
	p = binary.AppendUvarint(p, uint64(len(ops)-w.no))
	for _, o := range ops[w.no:] {
		p = appendString(p, o)
	}
	p = binary.AppendUvarint(p, uint64(len(events)))
	prev := w.base
	for _, e := range events {
		p = appendEvent(p, e, prev)
		prev = e.Start
	}
	w.buf = p
	w.nw, w.no = len(workers), len(ops)
	w.events += int64(len(events))
	head := binary.AppendUvarint([]byte{tagBlock}, uint64(len(p)))
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc32.ChecksumIEEE(p))
	for _, b := range [][]byte{head, p, sum[:]} {
		if _, err := w.w.Write(b); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func appendEvent(p []byte, e Event, prev int64) []byte {
	p = binary.AppendUvarint(p, uint64(e.Worker))
	k := byte(e.Kind)
	edge := e.Channel != 0 || e.Seq != 0
	if edge {
		k |= edgeBit
	}
	p = append(p, k)
	p = binary.AppendUvarint(p, uint64(e.Op))
	p = binary.AppendVarint(p, e.Start-prev)
	p = binary.AppendUvarint(p, uint64(max(e.End-e.Start, 0)))
	if edge {
		p = binary.AppendUvarint(p, e.Channel)
		p = binary.AppendUvarint(p, e.Seq)
	}
	return p
}

func appendString(p []byte, s string) []byte {
	if len(s) > maxName {
		s = s[:maxName]
	}
	p = binary.AppendUvarint(p, uint64(len(s)))
	return append(p, s...)
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Close writes the end mark and flushes; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err == nil {
		end := binary.AppendUvarint([]byte{tagEnd}, uint64(w.events))
		_, w.err = w.w.Write(end)
	}
	return w.Flush()
}
