package codec

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"testing"
)

// YSBEvent is a Yahoo Streaming Benchmark ad event.
type YSBEvent struct {
	UserID, PageID, AdID, AdType, EventType string
	EventTime                               int64
	IP                                      string
}

// PartialAgg is a keyed window's partial aggregate.
type PartialAgg struct {
	H          uint64
	K          string
	Start, End int64
	Acc        int64
}

// Payment is pointer-free.
type Payment struct {
	ID     uint64
	User   uint32
	Amount int64
}

const benchBatch = 1024

func uuid(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

func ysbBatch() []YSBEvent {
	r := rand.New(rand.NewPCG(1, 2))
	adTypes := []string{"banner", "modal", "sponsored-search", "mail", "mobile"}
	events := []string{"view", "click", "purchase"}
	vs := make([]YSBEvent, benchBatch)
	for i := range vs {
		vs[i] = YSBEvent{
			UserID: uuid(r), PageID: uuid(r), AdID: uuid(r),
			AdType: adTypes[r.IntN(len(adTypes))], EventType: events[r.IntN(len(events))],
			EventTime: 1_700_000_000_000 + int64(i),
			IP:        fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256)),
		}
	}
	return vs
}

func partialBatch() []PartialAgg {
	r := rand.New(rand.NewPCG(3, 4))
	vs := make([]PartialAgg, benchBatch)
	for i := range vs {
		start := 1_700_000_000_000 + int64(i/100)*10_000
		vs[i] = PartialAgg{H: r.Uint64(), K: uuid(r), Start: start, End: start + 10_000, Acc: int64(r.IntN(1000))}
	}
	return vs
}

func paymentBatch() []Payment {
	r := rand.New(rand.NewPCG(5, 6))
	vs := make([]Payment, benchBatch)
	for i := range vs {
		vs[i] = Payment{ID: uint64(i) + 1<<32, User: r.Uint32N(1e6), Amount: r.Int64N(1e7)}
	}
	return vs
}

func BenchmarkYSB(b *testing.B)     { benchBoth(b, ysbBatch()) }
func BenchmarkPartial(b *testing.B) { benchBoth(b, partialBatch()) }
func BenchmarkPayment(b *testing.B) { benchBoth(b, paymentBatch()) }

func benchBoth[T any](b *testing.B, vs []T) {
	b.Run("codec/encode", func(b *testing.B) { benchEncode(b, vs) })
	b.Run("codec/decode", func(b *testing.B) { benchDecode(b, vs) })
	b.Run("gob/encode", func(b *testing.B) { benchGobEncode(b, vs) })
	b.Run("gob/decode", func(b *testing.B) { benchGobDecode(b, vs) })
}

func report(b *testing.B, records, bytes int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	b.ReportMetric(float64(bytes)/float64(records), "bytes/record")
	b.ReportMetric(0, "ns/op")
}

func benchEncode[T any](b *testing.B, vs []T) {
	c := must(For[T]())
	var buf []byte
	for b.Loop() {
		buf = c.Append(buf[:0], vs)
	}
	report(b, b.N*len(vs), b.N*len(buf))
}

func benchDecode[T any](b *testing.B, vs []T) {
	c := must(For[T]())
	buf := c.Append(nil, vs)
	out := make([]T, 0, len(vs))
	for b.Loop() {
		var err error
		if out, err = c.Decode(buf, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
	report(b, b.N*len(vs), b.N*len(buf))
}

// benchGobEncode encodes batches with one Encoder for the whole stream, so
// gob sends its type description once.
func benchGobEncode[T any](b *testing.B, vs []T) {
	var w bytes.Buffer
	enc := gob.NewEncoder(&w)
	if err := enc.Encode(vs); err != nil { // the type description
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		w.Reset()
		if err := enc.Encode(vs); err != nil {
			b.Fatal(err)
		}
		n += w.Len()
	}
	report(b, b.N*len(vs), n)
}

// benchGobDecode decodes a stream of batches with one Decoder, starting a
// new one (which reads the type description again) every 64 batches.
func benchGobDecode[T any](b *testing.B, vs []T) {
	const batches = 64
	var w bytes.Buffer
	enc := gob.NewEncoder(&w)
	_ = enc.Encode(vs)
	first := w.Len()
	for range batches - 1 {
		if err := enc.Encode(vs); err != nil {
			b.Fatal(err)
		}
	}
	per := (w.Len() - first) / (batches - 1)
	stream := w.Bytes()
	var dec *gob.Decoder
	out := make([]T, 0, len(vs))
	i := 0
	for b.Loop() {
		if i%batches == 0 {
			dec = gob.NewDecoder(bytes.NewReader(stream))
		}
		i++
		out = out[:0]
		if err := dec.Decode(&out); err != nil {
			b.Fatal(err)
		}
	}
	report(b, b.N*len(vs), b.N*per)
}
