package nats_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/nats"
)

// badPayloads returns n payloads, every 37th (from the 6th) not a number,
// with the good numbers.
func badPayloads(n int) (payloads []string, good []int) {
	for i := range n {
		if i%37 == 5 {
			payloads = append(payloads, fmt.Sprintf("bad-%d", i))
			continue
		}
		payloads = append(payloads, strconv.Itoa(i))
		good = append(good, i)
	}
	return payloads, good
}

// Messages the decoder rejects go to the dead letters, with the stream
// and their sequence, and are counted; the others are read.
func TestDeadLetters(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	payloads, good := badPayloads(3000)
	seqs := publish(t, js, stream+".x", payloads)
	var want []file.Letter
	for i, p := range payloads {
		if strings.HasPrefix(p, "bad") {
			_, err := strconv.Atoi(p)
			want = append(want, file.Letter{Source: "numbers", Split: stream, Offset: int64(seqs[i]), Reason: err.Error(), Record: p})
		}
	}
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	dl, err := file.OpenDeadLetter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true, DeadLetter: dl}, decodeInt)
	j := weir.NewJob("dead", weir.Workers(1))
	col := &weir.Collect[int]{}
	weir.Sink(weir.Source(j, "numbers", src), col, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := col.Records(); !slices.Equal(got, good) {
		t.Errorf("read %d good records, want %d", len(got), len(good))
	}
	letters, err := file.ReadDeadLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(letters, want) {
		t.Errorf("%d letters, want %d; first %+v, want %+v", len(letters), len(want), letters[:min(1, len(letters))], want[0])
	}
	if n := j.Metrics().Counters["dead_letters"]; n != int64(len(want)) || dl.Count() != n {
		t.Errorf("dead_letters = %d, Count = %d; want %d", n, dl.Count(), len(want))
	}
}

// Without a dead-letter output, a rejected message fails the job with an
// error that names the stream and the sequence.
func TestBadMessageFails(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	payloads, _ := badPayloads(100)
	seqs := publish(t, js, stream+".x", payloads)
	src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true}, decodeInt)
	j := weir.NewJob("fail", weir.Workers(1))
	weir.Sink(weir.Source(j, "numbers", src), &weir.Collect[int]{}, weir.Name("out"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := j.Run(ctx)
	want := fmt.Sprintf("nats: stream %s sequence %d (subject %s.x): ", stream, seqs[5], stream)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Run: %v; want an error with %q", firstLine(err), want)
	}
}

// A job that crashes after some letters and is restored from its
// checkpoint leaves each rejected message in the dead letters once, and
// reads each good one once.
func TestDeadLettersRestart(t *testing.T) {
	url, js := server(t)
	stream := newStream(t, js)
	payloads, good := badPayloads(10000)
	seqs := publish(t, js, stream+".x", payloads)
	var want []int64
	for i, p := range payloads {
		if strings.HasPrefix(p, "bad") {
			want = append(want, int64(seqs[i]))
		}
	}
	dir := t.TempDir()
	path, ckpt := filepath.Join(dir, "dead.jsonl"), filepath.Join(dir, "ckpt")
	run := func(crashAt int, opts ...weir.JobOption) ([]int, *file.DeadLetter, error) {
		dl, err := file.OpenDeadLetter(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dl.Close() })
		src := nats.Source(nats.SourceConfig{URL: url, Stream: stream, Bounded: true, DeadLetter: dl}, decodeInt)
		j := weir.NewJob("dead", append([]weir.JobOption{weir.Workers(1), weir.EpochRecords(100), weir.Checkpoints(ckpt, 2, 3)}, opts...)...)
		s := weir.Map(weir.Source(j, "numbers", src), func(v int) int {
			if v == crashAt {
				panic("crash")
			}
			return v
		}, weir.Stateless())
		col := &weir.Collect[int]{}
		weir.Sink(s, col, weir.Name("out"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = j.Run(ctx)
		return col.Records(), dl, err
	}
	if _, _, err := run(6003); err == nil {
		t.Fatal("first run: no crash")
	}
	got, dl, err := run(-1, weir.FromCheckpoint(latestCheckpoint(t, ckpt)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, good) {
		t.Errorf("read %d good records, want %d once each", len(got), len(good))
	}
	letters, err := file.ReadDeadLetters(path)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	for _, l := range letters {
		offsets = append(offsets, l.Offset)
	}
	if !slices.Equal(offsets, want) {
		t.Errorf("letters at %d sequences, want %d once each", len(offsets), len(want))
	}
	if dl.Count() != int64(len(want)) {
		t.Errorf("Count = %d, want %d", dl.Count(), len(want))
	}
}
