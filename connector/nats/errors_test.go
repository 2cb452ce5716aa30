package nats_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/nats"
)

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil || !containsAll(err.Error(), parts...) {
		t.Errorf("%s: %v; want an error with %q", what, err, parts)
	}
}

// A missing stream is an error that names it and the server, on the
// source and on a sink that does not create it; a sink that does
// creates it.
func TestMissingStream(t *testing.T) {
	url, js := server(t)
	name := streamName(t, js)
	_, err := nats.Source(nats.SourceConfig{URL: url, Stream: name}, decodeInt).Open(weir.SourceContext{Parallelism: 1})
	wantErr(t, "source", err, "nats: stream "+name+" not found at "+url)
	snk := nats.Sink(nats.SinkConfig{URL: url, Stream: name}, func(v int, dst []byte) []byte { return dst })
	wantErr(t, "sink", snk.Write([]int{1}), "nats: stream "+name+" not found at "+url)
	snk = nats.Sink(nats.SinkConfig{URL: url, Stream: name, Create: true}, func(v int, dst []byte) []byte { return append(dst, 'x') })
	if err := snk.Write([]int{1, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := snk.(weir.EpochSink).EndEpoch(1); err != nil {
		t.Fatal(err)
	}
	if err := snk.Close(); err != nil {
		t.Fatal(err)
	}
	// Three records of equal bytes: one message under the default id.
	if n := storedMsgs(t, js, name); n != 1 {
		t.Errorf("created stream holds %d messages, want 1", n)
	}
}

// A publication the server refuses fails the sink at the epoch's end,
// naming the stream.
func TestSinkRefused(t *testing.T) {
	url, js := server(t)
	name := streamName(t, js)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name}, MaxMsgs: 2, Discard: jetstream.DiscardNew})
	if err != nil {
		t.Fatal(err)
	}
	snk := nats.Sink(nats.SinkConfig{URL: url, Stream: name}, func(v int, dst []byte) []byte { return strconv.AppendInt(dst, int64(v), 10) })
	if err := snk.Write([]int{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "EndEpoch", snk.(weir.EpochSink).EndEpoch(1), "nats: publishing to stream "+name, "maximum messages")
	if err := snk.Close(); err != nil {
		t.Errorf("Close after the error was reported: %v", err)
	}
}

// Bad URLs fail at once.
func TestBadURL(t *testing.T) {
	for _, url := range []string{"", "http://127.0.0.1:4222", "nats://127.0.0.1:abc", "nats://:4222"} {
		_, err := nats.Source(nats.SourceConfig{URL: url, Stream: "S"}, decodeInt).Open(weir.SourceContext{Parallelism: 1})
		wantErr(t, "source at "+url, err, "nats: ")
		if err != nil && !strings.Contains(err.Error(), "URL") {
			t.Errorf("source at %q: %v; want it to say the URL is bad", url, err)
		}
		err = nats.Sink(nats.SinkConfig{URL: url, Stream: "S"}, func(v int, dst []byte) []byte { return dst }).Write([]int{1})
		wantErr(t, "sink at "+url, err, "URL")
	}
}

// A server that cannot be reached is tried for about 10 s, then the
// error names its address.
func TestUnreachable(t *testing.T) {
	const url = "nats://127.0.0.1:1"
	t.Run("source", func(t *testing.T) {
		t.Parallel()
		t0 := time.Now()
		_, err := nats.Source(nats.SourceConfig{URL: url, Stream: "S"}, decodeInt).Open(weir.SourceContext{Parallelism: 1})
		wantErr(t, "source", err, "nats: cannot reach "+url)
		if d := time.Since(t0); d < 8*time.Second || d > 15*time.Second {
			t.Errorf("gave up after %v, want about 10 s", d)
		}
	})
	t.Run("sink", func(t *testing.T) {
		t.Parallel()
		err := nats.Sink(nats.SinkConfig{URL: url, Stream: "S"}, func(v int, dst []byte) []byte { return dst }).Write([]int{1})
		wantErr(t, "sink", err, "nats: cannot reach "+url)
	})
}
