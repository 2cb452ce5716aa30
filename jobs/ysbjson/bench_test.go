package ysbjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/gen"
)

func BenchmarkDecode(b *testing.B) {
	b.SetBytes(int64(len(validLine)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(validLine); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchData is a JSON-lines buffer of n generated events.
func benchData(b *testing.B, n int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	for range n {
		m := randomEvent(r)
		m["ad_type"] = "banner"
		delete(m, "extra")
		line, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func BenchmarkBaseline(b *testing.B) {
	const n = 100_000
	data := benchData(b, n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var sum int64
	for b.Loop() {
		if err := Baseline(data, func(e *gen.YSBEvent) { sum += e.EventTime }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeLines decodes the same buffer as BenchmarkBaseline line by
// line with Decode.
func BenchmarkDecodeLines(b *testing.B) {
	const n = 100_000
	data := benchData(b, n)
	s := string(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var sum int64
	for b.Loop() {
		for rest := s; len(rest) > 0; {
			i := strings.IndexByte(rest, '\n')
			e, err := Decode(rest[:i])
			if err != nil {
				b.Fatal(err)
			}
			sum += e.EventTime
			rest = rest[i+1:]
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "events/s")
}
