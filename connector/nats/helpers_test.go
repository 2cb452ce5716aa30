package nats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/internal/services"
)

var streamSeq atomic.Int64

// server connects to the test server and returns its URL and a
// JetStream client.
func server(t *testing.T) (string, jetstream.JetStream) {
	t.Helper()
	url := services.Need(t, services.NATS)
	nc, err := natsio.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return url, js
}

// streamName returns a stream name no other test uses, and deletes the
// stream, if made, when the test ends.
func streamName(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	name := fmt.Sprintf("WEIRTEST_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, streamSeq.Add(1))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		js.DeleteStream(ctx, name)
	})
	return name
}

// newStream creates a stream on subjects (default: name.>) and returns
// its name.
func newStream(t *testing.T, js jetstream.JetStream, subjects ...string) string {
	t.Helper()
	name := streamName(t, js)
	if len(subjects) == 0 {
		subjects = []string{name + ".>"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: subjects}); err != nil {
		t.Fatal(err)
	}
	return name
}

// publish publishes the payloads on subject, in order, and returns their
// stream sequences.
func publish(t *testing.T, js jetstream.JetStream, subject string, payloads []string) []uint64 {
	t.Helper()
	futs := make([]jetstream.PubAckFuture, len(payloads))
	for i, p := range payloads {
		f, err := js.PublishAsync(subject, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		futs[i] = f
	}
	seqs := make([]uint64, len(payloads))
	for i, f := range futs {
		select {
		case ack := <-f.Ok():
			seqs[i] = ack.Sequence
		case err := <-f.Err():
			t.Fatalf("publishing %q: %v", payloads[i], err)
		case <-time.After(10 * time.Second):
			t.Fatal("no ack in 10 s")
		}
	}
	return seqs
}

// numbers returns "0" to "n-1".
func numbers(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}

func decodeInt(data []byte) (int, error) { return strconv.Atoi(string(data)) }

// streamOf returns the stream of that name.
func streamOf(t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storedMsgs returns the number of messages the stream holds.
func storedMsgs(t *testing.T, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := streamOf(t, js, stream).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// latestCheckpoint returns the directory of the newest complete
// checkpoint in dir.
func latestCheckpoint(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var done []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "chk-") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "MANIFEST")); err == nil {
			done = append(done, e.Name())
		}
	}
	if len(done) == 0 {
		t.Fatalf("no complete checkpoint in %s", dir)
	}
	slices.Sort(done)
	return filepath.Join(dir, done[len(done)-1])
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
