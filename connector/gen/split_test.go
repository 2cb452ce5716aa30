package gen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// splitRun opens the par readers of src, resumes them from positions with
// SeekSplits unless positions is nil, and reads on each a random number of
// batches (none, some, or to the end). It returns the records each read
// before the position it then took after a random prefix of its last
// batch, and the positions.
func splitRun[T any](t testing.TB, rng *rand.Rand, src weir.Input[T], par, perReader int, positions [][]byte) ([][]T, [][]byte) {
	t.Helper()
	read, cuts := make([][]T, par), make([][]byte, par)
	for i := range par {
		r, s := seekable(t, src, weir.SourceContext{Instance: i, Parallelism: par})
		if positions != nil {
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("SeekSplits on %d of %d: %v", i, par, err)
			}
		}
		reads := rng.IntN(perReader+3) - 1
		var last []T
		for k := 0; reads < 0 || k < reads; k++ {
			read[i] = append(read[i], last...)
			b, err := r.Read()
			if last = slices.Clone(b); err != nil {
				break
			}
		}
		used := 0
		if len(last) > 0 {
			used = rng.IntN(len(last) + 1)
		}
		read[i] = append(read[i], last[:used]...)
		var err error
		if cuts[i], err = s.Position(used); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	return read, cuts
}

// splitTrials runs random sequences of runs with random parallelisms,
// each stopped at random cuts, then a last one that reads to the end, on
// the sources mk makes. Over the runs, every record of the input must be
// read once (key gives what must match: the records, without the event
// times if they come from the wall clock); each reader of the last run
// must read its share in order (seq gives the sequence number of a
// record).
func splitTrials[T any, K comparable](t *testing.T, trials int, mk func(events int64, batch int, rate float64) weir.Input[T], key func(T) K, seq func(T) uint64) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range trials {
		events, batch := int64(1+rng.IntN(300)), 1+rng.IntN(30)
		rate := []float64{0, 0, 1e7}[trial%3]
		src := mk(events, batch, rate)
		var model []K
		for _, rec := range readRest(t, must(mk(events, 1<<20, rate).Open(weir.SourceContext{Instance: 0, Parallelism: 1}))) {
			model = append(model, key(rec))
		}
		pars := []int{1 + rng.IntN(5)}
		var got []K
		var positions [][]byte
		for range 1 + rng.IntN(3) {
			p := pars[len(pars)-1]
			read, cuts := splitRun(t, rng, src, p, int(events)/p/batch, positions)
			for _, rec := range slices.Concat(read...) {
				got = append(got, key(rec))
			}
			positions = cuts
			pars = append(pars, 1+rng.IntN(5))
		}
		par := pars[len(pars)-1]
		if trial%5 == 0 {
			par = len(positions) // the same parallelism: like Seek
		}
		name := fmt.Sprintf("trial %d (events %d, batch %d, rate %v, runs %v)", trial, events, batch, rate, pars[:len(pars)-1])
		for i := range par {
			ctx := weir.SourceContext{Instance: i, Parallelism: par}
			r, s := seekable(t, src, ctx)
			if err := r.(weir.Rescalable).SeekSplits(positions); err != nil {
				t.Fatalf("%s: SeekSplits on %d of %d: %v", name, i, par, err)
			}
			pos0, _ := s.Position(0)
			share := readRest(t, r)
			r.Close()
			for k, rec := range share {
				if q := seq(rec); q%uint64(par) != uint64(i) || k > 0 && q <= seq(share[k-1]) {
					t.Fatalf("%s: reader %d of %d read record %d after %d", name, i, par, q, seq(share[max(k-1, 0)]))
				}
				got = append(got, key(rec))
			}
			// Seek to the position a resumed reader has at first, on a
			// reader of the same instance, reads the same.
			r2, s2 := seekable(t, src, ctx)
			if err := s2.Seek(pos0); err != nil {
				t.Fatalf("%s: Seek(%x): %v", name, pos0, err)
			}
			if again, _ := s2.Position(0); !bytes.Equal(again, pos0) {
				t.Fatalf("%s: Position(0) after Seek = %x; want %x", name, again, pos0)
			}
			again := readRest(t, r2)
			r2.Close()
			if len(again) != len(share) {
				t.Fatalf("%s: reader %d of %d read %d records after SeekSplits, %d after Seek to its position", name, i, par, len(share), len(again))
			}
			for k := range again {
				if key(again[k]) != key(share[k]) {
					t.Fatalf("%s: reader %d of %d, record %d after Seek differs", name, i, par, k)
				}
			}
		}
		if !maps.Equal(counts(got), counts(model)) {
			t.Fatalf("%s: read %d records over the runs; want each of the %d once", name, len(got), len(model))
		}
	}
}

func TestSeekSplitsZipf(t *testing.T) {
	type rec struct {
		key, value uint64
		time       int64
	}
	splitTrials(t, 400, func(events int64, batch int, rate float64) weir.Input[ZipfRecord] {
		return Zipf{Keys: 50, S: 1.1, Seed: 2, Events: events, BatchSize: batch, Rate: rate, StartTime: 1_000_000}
	}, func(z ZipfRecord) rec {
		if z.EventTime-syntheticTime(1_000_000, 1_000_000, uint64(z.Value)) != 0 {
			z.EventTime = -1 // paced: from the wall clock
		}
		return rec{z.Key, uint64(z.Value), z.EventTime}
	}, func(z ZipfRecord) uint64 { return uint64(z.Value) })
}

func TestSeekSplitsYSB(t *testing.T) {
	splitTrials(t, 80, func(events int64, batch int, rate float64) weir.Input[YSBEvent] {
		return YSB{Seed: 9, Events: events, BatchSize: batch, StartTime: 5_000, Campaigns: 7, EventTimeRate: 1000}
	}, func(e YSBEvent) YSBEvent { return e }, func(e YSBEvent) uint64 { return uint64(e.EventTime - 5_000) })
}

func TestSeekSplitsNexmark(t *testing.T) {
	splitTrials(t, 80, func(events int64, batch int, rate float64) weir.Input[NexmarkEvent] {
		return Nexmark{Seed: 4, Events: events, BatchSize: batch, StartTime: 7_000, EventTimeRate: 1000}
	}, func(e NexmarkEvent) NexmarkEvent { return e }, func(e NexmarkEvent) uint64 { return uint64(e.Time() - 7_000) })
}

func TestSeekSplitsPacedTimes(t *testing.T) {
	// A rescaled reader gives record seq the time t0 + seq*1000/Rate, t0
	// the earliest origin of the old readers.
	const rate = 1e6
	src := Zipf{Keys: 10, S: 1, Events: 3000, Rate: rate, BatchSize: 50}
	rng := rand.New(rand.NewPCG(1, 2))
	read, cuts := splitRun(t, rng, weir.Input[ZipfRecord](src), 2, 20, nil)
	var t0 int64 = 1 << 62
	for _, share := range read {
		if len(share) > 0 {
			t0 = min(t0, share[0].EventTime)
		}
	}
	for i := range 3 {
		r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: i, Parallelism: 3})
		if err := r.(weir.Rescalable).SeekSplits(cuts); err != nil {
			t.Fatal(err)
		}
		for _, z := range readRest(t, r) {
			if want := syntheticTime(t0, rate, uint64(z.Value)); t0 != 1<<62 && z.EventTime != want {
				t.Fatalf("record %d has time %d; want %d", z.Value, z.EventTime, want)
			}
		}
	}
}

func TestSeekSplitsUnbounded(t *testing.T) {
	// Old readers far apart: the new readers fill the gaps, in order, then
	// go on.
	src := Zipf{Keys: 10, S: 1, BatchSize: 16, Duration: time.Hour}
	var cuts [][]byte
	emitted := []uint64{3*16 + 5, 100*16 + 2, 7}
	for j, k := range emitted {
		r, s := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: j, Parallelism: 3})
		for range (k + 15) / 16 {
			r.Read()
		}
		pos, err := s.Position(int(k - (k-1)/16*16))
		if err != nil {
			t.Fatal(err)
		}
		cuts = append(cuts, pos)
		r.Close()
	}
	left := func(seq uint64) bool { return seq/3 >= emitted[seq%3] }
	for i := range 4 {
		r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: i, Parallelism: 4})
		if err := r.(weir.Rescalable).SeekSplits(cuts); err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for len(got) < 1000 {
			b, _ := r.Read()
			for _, z := range b {
				got = append(got, uint64(z.Value))
			}
		}
		var want []uint64
		for seq := uint64(i); len(want) < len(got); seq += 4 {
			if left(seq) {
				want = append(want, seq)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("reader %d of 4 read %v; want %v", i, got[:20], want[:20])
		}
		r.Close()
	}
}

func TestSeekSplitsDuration(t *testing.T) {
	// The largest time spent of the old readers counts: one that had run
	// for Duration ends the new readers.
	src := Zipf{Keys: 10, S: 1, BatchSize: 16, Duration: 30 * time.Millisecond}
	r0, s0 := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: 0, Parallelism: 2})
	readRest(t, r0)
	r1, s1 := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: 1, Parallelism: 2})
	r1.Read()
	p0, _ := s0.Position(0)
	p1, _ := s1.Position(0)
	r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: 0, Parallelism: 1})
	if err := r.(weir.Rescalable).SeekSplits([][]byte{p0, p1}); err != nil {
		t.Fatal(err)
	}
	if n := len(readRest(t, r)); n != 0 {
		t.Errorf("read %d records after Duration had passed", n)
	}
}

func TestSeekSplitsBad(t *testing.T) {
	src := Zipf{Keys: 10, S: 1, Events: 100, StartTime: 1, BatchSize: 8}
	_, cuts := splitRun(t, rand.New(rand.NewPCG(1, 1)), weir.Input[ZipfRecord](src), 2, 3, nil)
	_, other := splitRun(t, rand.New(rand.NewPCG(1, 1)), weir.Input[ZipfRecord](Zipf{Keys: 10, S: 1, Events: 101, StartTime: 1}), 2, 3, nil)
	cfg := cuts[0][2:10]
	split := func(inst, par, mod uint64, next ...uint64) []byte {
		b := append([]byte{posSplitFormat, kindZipf}, cfg...)
		for _, v := range append([]uint64{inst, par, 2, 0, mod}, next...) {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	tests := []struct {
		name, want string
		positions  [][]byte
	}{
		{"none", "without positions", nil},
		{"too few", "position 0 of 1: position of instance 0 of 2", cuts[:1]},
		{"too many", "position 0 of 3: position of instance 0 of 2", [][]byte{cuts[0], cuts[1], cuts[1]}},
		{"order", "position 0 of 2: position of instance 1 of 2", [][]byte{cuts[1], cuts[0]}},
		{"other settings", "position 0 of 2: position taken with other settings", other},
		{"truncated", "position 1 of 2: position of 9 bytes is truncated", [][]byte{cuts[0], cuts[1][:9]}},
		{"beyond", "beyond the share of 50", [][]byte{cuts[0], positionFields(1, kindZipf, binary.LittleEndian.Uint64(cfg), 1, 2, 51, 2, 0)}},
		{"modulus", "corrupt modulus 3", [][]byte{cuts[0], split(1, 2, 3, 0)}},
		{"classes", "more than 16384", [][]byte{cuts[0], split(1, 2, 1<<20, 0)}},
		{"seq", "beyond the sequence numbers", [][]byte{cuts[0], split(1, 2, 2, 1<<63)}},
		{"short", "truncated", [][]byte{cuts[0], split(1, 2, 4, 1)}},
	}
	for _, tt := range tests {
		r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: 0, Parallelism: 3})
		err := r.(weir.Rescalable).SeekSplits(tt.positions)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "gen.Zipf: ") {
			t.Errorf("%s: SeekSplits = %v; want an error with %q", tt.name, err, tt.want)
		}
	}
	r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: 0, Parallelism: 3})
	r.Close()
	if err := r.(weir.Rescalable).SeekSplits(cuts); err == nil {
		t.Errorf("SeekSplits after Close: nil error")
	}
}

func FuzzSeekSplitsGen(f *testing.F) {
	src := Zipf{Keys: 5, S: 1, Events: 40, BatchSize: 6, StartTime: 1}
	rng := rand.New(rand.NewPCG(4, 5))
	for range 8 {
		_, cuts := splitRun(f, rng, weir.Input[ZipfRecord](src), 2, 4, nil)
		f.Add(cuts[0], cuts[1])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		seen := make(map[int64]bool)
		for i := range 3 {
			r, _ := seekable(t, weir.Input[ZipfRecord](src), weir.SourceContext{Instance: i, Parallelism: 3})
			if err := r.(weir.Rescalable).SeekSplits([][]byte{a, b}); err != nil {
				if !strings.HasPrefix(err.Error(), "gen.Zipf: ") {
					t.Fatalf("error without the prefix: %v", err)
				}
				continue
			}
			for _, z := range readRest(t, r) {
				if z.Value%3 != int64(i) || z.Value >= 40 || seen[z.Value] {
					t.Fatalf("reader %d of 3 read record %d: out of its share or twice", i, z.Value)
				}
				seen[z.Value] = true
			}
		}
	})
}
