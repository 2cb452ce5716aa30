package nats_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/nats"
)

// readAll runs a job that reads src with k source instances and
// returns what it read.
func readAll[T any](t *testing.T, src weir.Input[T], k int) []T {
	t.Helper()
	j := weir.NewJob("read", weir.Workers(2))
	col := &weir.Collect[T]{}
	weir.Sink(weir.Source(j, "in", src, weir.Parallelism(k)), col, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return col.Records()
}

// A bounded source reads what the stream held and ends, with one
// source instance or three (two of which read nothing); messages
// published after the reader opened are not read.
func TestBoundedRead(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	const n = 5000
	publish(t, js, stream+".a", numbers(n))
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	for _, k := range []int{1, 3} {
		t.Run(fmt.Sprintf("instances=%d", k), func(t *testing.T) {
			got := readAll(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt), k)
			if !slices.Equal(got, want) {
				t.Errorf("read %d records, want %d in order", len(got), len(want))
			}
		})
	}
	// On a subject filter: only its messages, up to its last.
	publish(t, js, stream+".b", []string{"-1", "-2", "-3"})
	publish(t, js, stream+".a", []string{"-4"})
	got := readAll(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, Subject: stream + ".b", Bounded: true}, decodeInt), 1)
	if !slices.Equal(got, []int{-1, -2, -3}) {
		t.Errorf("on subject %s.b: read %v, want [-1 -2 -3]", stream, got)
	}
	// A filter that matches nothing ends at once.
	got = readAll(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, Subject: stream + ".none", Bounded: true}, decodeInt), 1)
	if len(got) != 0 {
		t.Errorf("on a subject without messages: read %v", got)
	}
	// Messages published after the reader opened are not read.
	r := open(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, Subject: stream + ".b", Bounded: true}, decodeInt), 0, 1)
	publish(t, js, stream+".b", []string{"-5"})
	got = nil
	for {
		b, err := r.Read()
		got = append(got, b...)
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, []int{-1, -2, -3}) {
		t.Errorf("with a message published after opening: read %v, want [-1 -2 -3]", got)
	}
}

// open opens instance inst of par of src.
func open[T any](t *testing.T, src weir.Input[T], inst, par int) weir.Reader[T] {
	t.Helper()
	r, err := src.Open(weir.SourceContext{Instance: inst, Parallelism: par})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readN reads from r until it has n records, for at most 10 s.
func readN[T any](t *testing.T, r weir.Reader[T], n int) []T {
	t.Helper()
	var got []T
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		b, err := r.Read()
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, b...)
	}
	return got
}

// An unbounded reader on an empty stream returns empty batches at once,
// and the messages as they come; the other instances end at once.
func TestReadEmptyStream(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream}, decodeInt)
	r := open(t, src, 0, 2)
	var slowest time.Duration
	for range 20 {
		t0 := time.Now()
		b, err := r.Read()
		d := time.Since(t0)
		slowest = max(slowest, d)
		if len(b) != 0 || err != nil {
			t.Fatalf("Read on an empty stream: %v, %v", b, err)
		}
	}
	if slowest > 50*time.Millisecond {
		t.Errorf("Read on an empty stream took up to %v, want under 50 ms", slowest)
	}
	t.Logf("slowest empty Read: %v", slowest)
	if w := r.(weir.Waiter).Waited(); w <= 0 {
		t.Errorf("Waited = %v after empty reads", w)
	}
	publish(t, js, stream+".x", []string{"7", "8"})
	if got := readN(t, r, 2); !slices.Equal(got, []int{7, 8}) {
		t.Errorf("after publishing: read %v, want [7 8]", got)
	}
	other := open(t, src, 1, 2)
	if b, err := other.Read(); len(b) != 0 || err != io.EOF {
		t.Errorf("instance 1 of 2: Read = %v, %v; want io.EOF", b, err)
	}
}

// Positions resume where they were taken, partway into a batch too;
// positions of another stream or of the wrong instance are refused;
// SeekSplits resumes instance 0 where the old instance 0 was.
func TestPositions(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	publish(t, js, stream+".x", numbers(100))
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt)
	r := open(t, src, 0, 1)
	s := r.(weir.Rescalable)
	if n := r.(weir.Backlogged).Backlog(); n != 100 {
		t.Errorf("Backlog before reading = %d, want 100", n)
	}
	start, err := s.Position(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Read()
	if err != nil || len(b) == 0 {
		t.Fatalf("Read: %d records, %v", len(b), err)
	}
	k := min(len(b), 10)
	pos, err := s.Position(k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Position(len(b) + 1); err == nil {
		t.Error("Position beyond the batch: no error")
	}
	for _, c := range []struct {
		pos   []byte
		first int
	}{{start, 0}, {pos, k}} {
		r2 := open(t, src, 0, 1)
		if err := r2.(weir.Seekable).Seek(c.pos); err != nil {
			t.Fatal(err)
		}
		if got := readN(t, r2, 100-c.first); len(got) != 100-c.first || got[0] != c.first {
			t.Errorf("after Seek: read %d records from %v, want %d from %d", len(got), got[:min(1, len(got))], 100-c.first, c.first)
		}
	}
	// Another stream's position.
	otherStream := newStream(t, js)
	other := open(t, nats.Source(nats.SourceConfig{URL: url, Stream: otherStream}, decodeInt), 0, 1)
	if err := other.(weir.Seekable).Seek(pos); err == nil || !containsAll(err.Error(), stream, otherStream) {
		t.Errorf("Seek to another stream's position: %v", err)
	}
	idlePos, _ := open(t, src, 1, 2).(weir.Seekable).Position(0)
	if err := open(t, src, 0, 1).(weir.Seekable).Seek(idlePos); err == nil {
		t.Error("Seek of instance 0 to an idle instance's position: no error")
	}
	if err := open(t, src, 0, 2).(weir.Seekable).Seek([]byte{9, 1}); err == nil {
		t.Error("Seek to a corrupt position: no error")
	}
	// SeekSplits: from 1 instance to 3, and back.
	r3 := open(t, src, 0, 3)
	if err := r3.(weir.Rescalable).SeekSplits([][]byte{pos}); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, r3, 100-k); len(got) != 100-k || got[0] != k {
		t.Errorf("after SeekSplits: read %d records, want %d from %d", len(got), 100-k, k)
	}
	if err := open(t, src, 0, 1).(weir.Rescalable).SeekSplits([][]byte{idlePos, pos}); err == nil {
		t.Error("SeekSplits with the reading position second: no error")
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// StartAt starts at the first message stored at or after a time; New
// after the last message.
func TestStartAtAndNew(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	publish(t, js, stream+".x", []string{"1", "2"})
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	publish(t, js, stream+".x", []string{"3", "4"})
	got := readAll(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, StartAt: mid, Bounded: true}, decodeInt), 1)
	if !slices.Equal(got, []int{3, 4}) {
		t.Errorf("StartAt: read %v, want [3 4]", got)
	}
	r := open(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, New: true}, decodeInt), 0, 1)
	if b, err := r.Read(); len(b) != 0 || err != nil {
		t.Fatalf("New: first Read = %v, %v; want nothing", b, err)
	}
	publish(t, js, stream+".x", []string{"5"})
	if got := readN(t, r, 1); !slices.Equal(got, []int{5}) {
		t.Errorf("New: read %v, want [5]", got)
	}
	_, err := nats.Source(nats.SourceConfig{URL: url, Stream: stream, New: true, StartAt: mid}, decodeInt).Open(weir.SourceContext{Parallelism: 1})
	if err == nil || !strings.Contains(err.Error(), "both New and StartAt") {
		t.Errorf("New and StartAt: %v", err)
	}
}

// The identity names the stream, the filter, the start and the end, not
// the server.
func TestIdentity(t *testing.T) {
	id := func(c nats.SourceConfig) string {
		return nats.Source(c, decodeInt).(weir.Identified).Identity()
	}
	a := id(nats.SourceConfig{URL: "nats://a:4222", Stream: "S", Subject: "s.x", Bounded: true})
	if b := id(nats.SourceConfig{URL: "nats://b:4222", Stream: "S", Subject: "s.x", Bounded: true}); a != b {
		t.Errorf("identities differ by server: %q, %q", a, b)
	}
	if want := `nats stream "S" subject "s.x", bounded`; a != want {
		t.Errorf("Identity = %q, want %q", a, want)
	}
	for _, c := range []nats.SourceConfig{{Stream: "T", Subject: "s.x", Bounded: true}, {Stream: "S", Bounded: true}, {Stream: "S", Subject: "s.x"}, {Stream: "S", Subject: "s.x", Bounded: true, New: true}} {
		if b := id(c); b == a {
			t.Errorf("%+v has the identity of another source: %q", c, b)
		}
	}
}

// A bounded reader ends even when the messages up to its bound were
// deleted after it opened.
func TestBoundedDeleted(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	publish(t, js, stream+".x", numbers(10))
	r := open(t, nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt), 0, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(6); seq <= 10; seq++ {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := r.Read()
		got = append(got, b...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("read %v, want [0 1 2 3 4] then io.EOF", got)
	}
	if _, err := r.Read(); err != io.EOF {
		t.Errorf("Read after the end: %v, want io.EOF", err)
	}
}
