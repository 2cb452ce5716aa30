package gen

import (
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir"
)

// benchRead measures an unpaced, unbounded reader of src.
func benchRead[T any](b *testing.B, src weir.Input[T]) {
	r, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		batch, err := r.Read()
		if err != nil {
			b.Fatal(err)
		}
		events += len(batch)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkYSBRead(b *testing.B) { benchRead(b, YSB{Seed: 1, StartTime: 1}) }

func BenchmarkZipfRead(b *testing.B) {
	benchRead(b, Zipf{Keys: 1_000_000, S: 1.1, Seed: 1, StartTime: 1})
}

func BenchmarkNexmarkRead(b *testing.B) { benchRead(b, Nexmark{Seed: 1, StartTime: 1}) }

func BenchmarkYSBEvents(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		YSBEvents(n, 1)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkZipfSample(b *testing.B) {
	z := NewZipfSampler(1_000_000, 0.8)
	r := rand.New(rand.NewPCG(1, 2))
	var sink uint64
	for b.Loop() {
		sink += z.Sample(r)
	}
	_ = sink
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkNewZipfSampler(b *testing.B) {
	for b.Loop() {
		NewZipfSampler(1_000_000, 1.1)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	events, _ := YSBEvents(1024, 1)
	buf := make([]byte, 0, 512)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		buf = events[i%len(events)].AppendJSON(buf[:0])
		i++
	}
	b.SetBytes(int64(len(buf)))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
