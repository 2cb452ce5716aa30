package gen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// seekable opens instance ctx of src as a weir.Seekable reader.
func seekable[T any](t testing.TB, src weir.Input[T], ctx weir.SourceContext) (weir.Reader[T], weir.Seekable) {
	t.Helper()
	r, err := src.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r, r.(weir.Seekable)
}

// readRest reads r to io.EOF.
func readRest[T any](t testing.TB, r weir.Reader[T]) []T {
	t.Helper()
	var out []T
	for {
		b, err := r.Read()
		out = append(out, b...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// seekTrial reads some batches of instance ctx of src (reads < 0: to the
// end), takes the position after a random prefix of the last one, reads
// on to the end (A), and checks that a new reader sought to the position
// reads the rest of A. If model is set, A must be it. With pause, the new
// reader is opened a few ms later, so that the wall clock has moved.
func seekTrial[T comparable](t *testing.T, rng *rand.Rand, src weir.Input[T], ctx weir.SourceContext, reads int, model []T, pause bool) {
	t.Helper()
	r, s := seekable(t, src, ctx)
	defer r.Close()
	var before, last []T
	for k := 0; reads < 0 || k < reads; k++ {
		before = append(before, last...)
		var err error
		if last, err = r.Read(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	used := 0
	if len(last) > 0 {
		used = rng.IntN(len(last) + 1)
	}
	pos, err := s.Position(used)
	if err != nil {
		t.Fatalf("Position(%d): %v", used, err)
	}
	before = append(before, last[:used]...)
	a := append(slices.Clone(before), last[used:]...)
	a = append(a, readRest(t, r)...)
	if model != nil && !slices.Equal(a, model) {
		t.Fatalf("read %d records, not the %d of the model", len(a), len(model))
	}
	if pause {
		time.Sleep(3 * time.Millisecond)
	}
	r2, s2 := seekable(t, src, ctx)
	defer r2.Close()
	if err := s2.Seek(pos); err != nil {
		t.Fatalf("Seek: %v", err)
	}
	if again, err := s2.Position(0); err != nil || !bytes.Equal(again, pos) {
		t.Fatalf("Position(0) right after Seek = %x, %v; want %x", again, err, pos)
	}
	b := append(before, readRest(t, r2)...)
	if len(b) != len(a) {
		t.Fatalf("%d reads, used %d of %d: %d records with Seek, %d without", reads, used, len(last), len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%d reads, used %d of %d: record %d after Seek is %v; want %v", reads, used, len(last), i, b[i], a[i])
		}
	}
}

// seekTrials runs trials of seekTrial on the sources mk makes.
func seekTrials[T comparable](t *testing.T, trials int, mk func(events int64, batch int, rate float64, start int64) weir.Input[T]) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range trials {
		events := int64(rng.IntN(400))
		batch := 1 + rng.IntN(40)
		par := 1 + rng.IntN(5)
		ctx := weir.SourceContext{Instance: rng.IntN(par), Parallelism: par}
		var rate float64
		var start int64
		switch trial % 4 {
		case 0:
			start = 1_000_000 // reproducible: check against the model
		case 1:
			rate = 1e6 // paced: event times from the wall clock
		}
		src := mk(events, batch, rate, start)
		var model []T
		if start != 0 {
			whole := readRest(t, must(mk(events, 1<<20, 0, start).Open(weir.SourceContext{Instance: 0, Parallelism: 1})))
			for seq := ctx.Instance; seq < len(whole); seq += par {
				model = append(model, whole[seq])
			}
		}
		reads := rng.IntN(int(events)/par/batch+3) - 1
		t.Run(fmt.Sprintf("%d:%d/%d,events=%d,batch=%d,rate=%v,reads=%d", trial, ctx.Instance, par, events, batch, rate, reads), func(t *testing.T) {
			seekTrial(t, rng, src, ctx, reads, model, trial%4 != 0 && trial%8 < 4)
		})
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

func TestSeekYSB(t *testing.T) {
	seekTrials(t, 60, func(events int64, batch int, rate float64, start int64) weir.Input[YSBEvent] {
		return YSB{Seed: 9, Events: events, BatchSize: batch, Rate: rate, StartTime: start, Campaigns: 7}
	})
}

func TestSeekZipf(t *testing.T) {
	seekTrials(t, 100, func(events int64, batch int, rate float64, start int64) weir.Input[ZipfRecord] {
		return Zipf{Keys: 50, S: 1.1, Seed: 2, Events: events, BatchSize: batch, Rate: rate, StartTime: start}
	})
}

func TestSeekNexmark(t *testing.T) {
	seekTrials(t, 60, func(events int64, batch int, rate float64, start int64) weir.Input[NexmarkEvent] {
		return Nexmark{Seed: 4, Events: events, BatchSize: batch, Rate: rate, StartTime: start, EventTimeRate: 5000}
	})
}

func TestSeekUnbounded(t *testing.T) {
	// Without Events, the sequence goes on from the position.
	src := Zipf{Keys: 10, S: 1, BatchSize: 7, Duration: time.Hour}
	ctx := weir.SourceContext{Instance: 2, Parallelism: 3}
	r, s := seekable(t, src, ctx)
	var b []ZipfRecord
	for range 5 {
		b, _ = r.Read()
	}
	pos, _ := s.Position(3)
	want := append(slices.Clone(b[3:]), must(r.Read())...)
	time.Sleep(2 * time.Millisecond) // a later wall clock at Open
	r2, s2 := seekable(t, src, ctx)
	if err := s2.Seek(pos); err != nil {
		t.Fatal(err)
	}
	got := append(slices.Clone(must(r2.Read())), must(r2.Read())...)[:len(want)]
	if !slices.Equal(got, want) || got[0].Value != 3*(4*7+3)+2 {
		t.Errorf("after Seek: %v; want %v", got, want)
	}
	r.Close()
	r2.Close()
}

func TestSeekDuration(t *testing.T) {
	// A position taken after Duration has passed ends the new reader at
	// once; one taken before leaves it the rest of Duration.
	const d = 100 * time.Millisecond
	for _, rate := range []float64{0, 1e5} {
		src := Nexmark{Duration: d, Rate: rate, BatchSize: 64}
		ctx := weir.SourceContext{Instance: 0, Parallelism: 1}
		r, s := seekable(t, src, ctx)
		r.Read()
		time.Sleep(d / 2)
		r.Read()
		mid, _ := s.Position(0)
		readRest(t, r)
		end, _ := s.Position(0)
		r2, s2 := seekable(t, src, ctx)
		if err := s2.Seek(end); err != nil {
			t.Fatal(err)
		}
		if b, err := r2.Read(); len(b) != 0 || err != io.EOF {
			t.Errorf("rate %v: Read after Seek to the end = %d records, %v; want io.EOF", rate, len(b), err)
		}
		r3, s3 := seekable(t, src, ctx)
		if err := s3.Seek(mid); err != nil {
			t.Fatal(err)
		}
		dec := posDecoder{B: mid[10:]}
		dec.Uvarint()
		dec.Uvarint()
		dec.Uvarint()
		dec.Varint()
		left := src.Duration - time.Duration(dec.Uvarint())
		if dec.Err != nil || left <= 0 || left > src.Duration/2 {
			t.Fatalf("rate %v: position in the middle %x leaves %v of %v (%v)", rate, mid, left, src.Duration, dec.Err)
		}
		t0 := time.Now()
		if n := len(readRest(t, r3)); n == 0 {
			t.Errorf("rate %v: nothing read after Seek to the middle", rate)
		}
		if took := time.Since(t0); took < left || took > left+time.Second {
			t.Errorf("rate %v: the reader ran %v after Seek to the middle; want %v", rate, took, left)
		}
	}
}

// positionFields encodes a position with the given fields.
func positionFields(format, kind byte, config, inst, par, k uint64, t0 int64, spent uint64) []byte {
	b := []byte{format, kind}
	b = binary.LittleEndian.AppendUint64(b, config)
	b = binary.AppendUvarint(b, inst)
	b = binary.AppendUvarint(b, par)
	b = binary.AppendUvarint(b, k)
	b = binary.AppendVarint(b, t0)
	return binary.AppendUvarint(b, spent)
}

func TestSeekBadPositions(t *testing.T) {
	src := Zipf{Keys: 10, S: 1, Events: 100, StartTime: 1}
	ctx := weir.SourceContext{Instance: 1, Parallelism: 4}
	_, s := seekable(t, src, ctx)
	if _, err := s.Position(1); err == nil {
		t.Errorf("Position(1) before any Read: nil error")
	}
	good, _ := s.Position(0)
	cfg := binary.LittleEndian.Uint64(good[2:])
	ysb, _ := YSB{}.Open(ctx)
	ysbPos, _ := ysb.(weir.Seekable).Position(0)
	other, _ := Zipf{Keys: 10, S: 1, Events: 100, StartTime: 1, Seed: 1}.Open(ctx)
	otherPos, _ := other.(weir.Seekable).Position(0)
	tests := []struct {
		name, want string
		pos        []byte
	}{
		{"empty", "empty position", nil},
		{"format", "format 9, want 1 or 2", append([]byte{9}, good[1:]...)},
		{"truncated", "truncated", good[:len(good)-1]},
		{"short", "truncated", good[:5]},
		{"trailing", "1 bytes too many", append(slices.Clone(good), 0)},
		{"kind", "position of gen.YSB", ysbPos},
		{"unknown kind", "unknown generator (kind 9)", positionFields(1, 9, cfg, 1, 4, 0, 1, 0)},
		{"instance", "instance 0 of 4, on the reader of instance 1 of 4", positionFields(1, kindZipf, cfg, 0, 4, 0, 1, 0)},
		{"settings", "other settings", otherPos},
		{"beyond", "after record 26, beyond the share of 25", positionFields(1, kindZipf, cfg, 1, 4, 26, 1, 0)},
		{"spent", "corrupt time spent", positionFields(1, kindZipf, cfg, 1, 4, 0, 1, 1<<63)},
	}
	for _, tt := range tests {
		_, s := seekable(t, src, ctx)
		err := s.Seek(tt.pos)
		if err == nil || !strings.HasPrefix(err.Error(), "gen.Zipf: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Seek(%x) = %v; want an error with %q", tt.name, tt.pos, err, tt.want)
		}
	}
	r, s := seekable(t, src, ctx)
	r.Close()
	if err := s.Seek(good); err == nil {
		t.Errorf("Seek after Close: nil error")
	}
	// An unbounded source refuses sequence numbers that would overflow.
	_, s = seekable(t, Zipf{Keys: 10, S: 1, StartTime: 1}, ctx)
	pos, _ := s.Position(0)
	cfg = binary.LittleEndian.Uint64(pos[2:])
	if err := s.Seek(positionFields(1, kindZipf, cfg, 1, 4, 1<<62, 1, 0)); err == nil || !strings.Contains(err.Error(), "beyond the sequence numbers") {
		t.Errorf("Seek beyond the sequence numbers: %v", err)
	}
}

func FuzzSeekGen(f *testing.F) {
	ctx := weir.SourceContext{Instance: 1, Parallelism: 3}
	srcs := []func() weir.Reader[int64]{
		func() weir.Reader[int64] { return times(must(YSB{Events: 40, BatchSize: 8}.Open(ctx))) },
		func() weir.Reader[int64] { return times(must(Zipf{Keys: 5, S: 1, Events: 40, BatchSize: 8}.Open(ctx))) },
		func() weir.Reader[int64] { return times(must(Nexmark{Events: 40, Rate: 1e9, BatchSize: 8}.Open(ctx))) },
	}
	for _, open := range srcs {
		r := open()
		r.Read()
		for used := range 9 {
			if pos, err := r.(weir.Seekable).Position(used); err == nil {
				f.Add(pos)
			}
		}
	}
	f.Fuzz(func(t *testing.T, pos []byte) {
		for _, open := range srcs {
			r := open()
			if err := r.(weir.Seekable).Seek(pos); err != nil {
				continue
			}
			if n := len(readRest(t, r)); n > 14 {
				t.Fatalf("read %d records after Seek(%x); the share has 13", n, pos)
			}
		}
	})
}

// timesReader reads the event times of a generator, for FuzzSeekGen.
type timesReader[T any] struct {
	*reader[T]
	time func(*T) int64
	out  []int64
}

func times[T any](r weir.Reader[T]) weir.Reader[int64] {
	tr := &timesReader[T]{reader: r.(*reader[T])}
	switch any(r).(type) {
	case *reader[YSBEvent]:
		tr.time = func(p *T) int64 { return any(p).(*YSBEvent).EventTime }
	case *reader[ZipfRecord]:
		tr.time = func(p *T) int64 { return any(p).(*ZipfRecord).EventTime }
	case *reader[NexmarkEvent]:
		tr.time = func(p *T) int64 { return any(p).(*NexmarkEvent).Time() }
	}
	return tr
}

func (r *timesReader[T]) Read() ([]int64, error) {
	b, err := r.reader.Read()
	r.out = r.out[:0]
	for i := range b {
		r.out = append(r.out, r.time(&b[i]))
	}
	return r.out, err
}
