package weir_test

import (
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/weirstream/weir"
)

// prec is a record whose value may point into a large input chunk.
type prec struct {
	Key string
	TS  int64
	V   string
}

// pinScript returns, read by read, records whose values are substrings of
// one 1 MiB chunk (first) and of fresh strings (later), then idles and
// checks with a weak pointer whether the chunk is still reachable.
type pinScript struct {
	// reads[i] are the records of read i; a value "chunk:N" is replaced by
	// a substring of the chunk.
	reads     [][]prec
	collected chan bool
}

func (p pinScript) Open(weir.SourceContext) (weir.Reader[prec], error) {
	return &pinScriptReader{s: p}, nil
}

type pinScriptReader struct {
	s     pinScript
	n     int
	chunk weak.Pointer[byte]
	buf   []prec
}

func (r *pinScriptReader) Read() ([]prec, error) {
	i := r.n
	r.n++
	switch {
	case i < len(r.s.reads):
		r.buf = make([]prec, 0, len(r.s.reads[i])) // never reuse: the reader must not pin
		var chunk string
		for _, p := range r.s.reads[i] {
			if strings.HasPrefix(p.V, "chunk:") {
				if chunk == "" {
					chunk = strings.Repeat("abcdefgh", 1<<17)
					r.chunk = weak.Make(unsafe.StringData(chunk))
				}
				off := len(r.buf) * 8
				p.V = chunk[off : off+5]
			} else {
				p.V = strings.Clone(p.V)
			}
			r.buf = append(r.buf, p)
		}
		return r.buf, nil
	case i < len(r.s.reads)+40:
		r.buf = nil
		time.Sleep(2 * time.Millisecond)
		return nil, nil
	case i == len(r.s.reads)+40:
		runtime.GC()
		runtime.GC()
		r.s.collected <- r.chunk.Value() == nil
		return nil, nil
	}
	return nil, io.EOF
}

func (r *pinScriptReader) Close() error { return nil }

type discard[T any] struct{}

func (discard[T]) Write([]T) error { return nil }
func (discard[T]) Close() error    { return nil }

// A micro-batch round's map partials must be forgotten when the round
// ends: with record-count epochs and an idle input there is no next round,
// and an accumulator that holds input data (here Reduce keeping the
// largest string) would pin the input chunk after its window fired.
func TestMicroPartialsDoNotPinInput(t *testing.T) {
	for _, strategy := range []string{"pkg", "prompt"} {
		t.Run(strategy, func(t *testing.T) {
			collected := make(chan bool, 1)
			script := pinScript{collected: collected, reads: [][]prec{
				// Epoch 0 (4 records): three records of window [0, 10)
				// whose values point into the chunk, and one far later
				// record that moves the watermark past that window.
				{{"k", 0, "chunk:"}, {"k", 1, "chunk:"}, {"k", 2, "chunk:"}, {"k", 1_000_000, "late-enough"}},
				// Epoch 1 starts and stays open while the input idles.
				{{"k", 1_000_001, "x"}, {"k", 1_000_002, "y"}},
			}}
			j := weir.NewJob("pin", weir.Workers(1), weir.EpochRecords(4), weir.Partitioning(strategy))
			src := weir.EventTime(weir.Source(j, "src", script), func(p prec) int64 { return p.TS }, 0)
			ws := weir.Window(weir.KeyBy(src, func(p prec) string { return p.Key }), weir.Tumbling(10*time.Millisecond))
			weir.Sink(weir.Reduce(ws, func(a, b prec) prec {
				if b.V > a.V {
					return b
				}
				return a
			}), discard[weir.WindowResult[string, prec]]{})
			if err := runWithin(t, j, time.Minute); err != nil {
				t.Fatal(err)
			}
			if !<-collected {
				t.Errorf("the chunk is still reachable while the input idles, after its window fired: a round's partials outlive it")
			}
		})
	}
}

// The window operator must not keep its last late records (and what they
// point to) once it has pushed them, under any strategy.
func TestLateRecordsDoNotPinInput(t *testing.T) {
	for _, strategy := range []string{"hash", "roundrobin", "pkg", "prompt"} {
		t.Run(strategy, func(t *testing.T) {
			collected := make(chan bool, 1)
			script := pinScript{collected: collected, reads: [][]prec{
				// Epoch 0: the watermark moves far ahead.
				{{"k", 1_000_000, "a"}, {"k", 1_000_000, "b"}, {"k", 1_000_000, "c"}, {"k", 1_000_000, "d"}},
				// Epoch 1: one late record whose value points into the chunk.
				{{"k", 0, "chunk:"}, {"k", 1_000_000, "e"}, {"k", 1_000_000, "f"}, {"k", 1_000_000, "g"}},
				// Epoch 2 stays open while the input idles.
				{{"k", 1_000_001, "x"}},
			}}
			j := weir.NewJob("pinlate", weir.Workers(1), weir.EpochRecords(4), weir.Partitioning(strategy))
			src := weir.EventTime(weir.Source(j, "src", script), func(p prec) int64 { return p.TS }, 0)
			ws := weir.Window(weir.KeyBy(src, func(p prec) string { return p.Key }), weir.Tumbling(10*time.Millisecond))
			weir.Sink(weir.Count(ws), discard[weir.WindowResult[string, int64]]{})
			if err := runWithin(t, j, time.Minute); err != nil {
				t.Fatal(err)
			}
			if late := j.Metrics().Late; late != 1 {
				t.Fatalf("%d late records, want 1", late)
			}
			if !<-collected {
				t.Errorf("the late record's chunk is still reachable while the input idles")
			}
		})
	}
}
