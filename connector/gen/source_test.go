package gen

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

func TestPaced(t *testing.T) {
	const rate, events, batch = 10_000, 500, 16
	src := YSB{Seed: 1, Rate: rate, Events: events, BatchSize: batch}
	start := time.Now()
	r, err := src.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		t0 := time.Now()
		b, err := r.Read()
		if d := time.Since(t0); d > time.Second {
			t.Errorf("Read took %v; want about %v at most", d, maxWait)
		}
		if len(b) > batch {
			t.Fatalf("batch of %d; want at most %d", len(b), batch)
		}
		for _, e := range b {
			if e.EventTime < start.UnixMilli() || e.EventTime > time.Now().UnixMilli() {
				t.Fatalf("event time %d outside [%d, now]", e.EventTime, start.UnixMilli())
			}
		}
		n += len(b)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != events {
		t.Errorf("read %d events; want %d", n, events)
	}
	// The last event is due (events-1)/rate after the first.
	if got, want := time.Since(start), time.Duration((events-1)*float64(time.Second)/rate); got < want {
		t.Errorf("took %v; want at least %v", got, want)
	}
}

func TestPacedSlowReturnsEmpty(t *testing.T) {
	r, err := Zipf{Keys: 10, S: 1, Rate: 0.2}.Open(weir.SourceContext{Instance: 0, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := r.Read(); len(b) != 1 || err != nil {
		t.Fatalf("first Read = %d records, %v; want 1, nil", len(b), err)
	}
	for range 3 {
		t0 := time.Now()
		b, err := r.Read()
		if len(b) != 0 || err != nil {
			t.Fatalf("Read = %d records, %v; want 0, nil", len(b), err)
		}
		// The next record is due in 10s; a Read must not wait for it.
		if d := time.Since(t0); d < maxWait || d > 2*time.Second {
			t.Errorf("empty Read took %v; want about %v", d, maxWait)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, rate := range []float64{0, 1000} {
		const d = 30 * time.Millisecond
		start := time.Now()
		r, err := Nexmark{Rate: rate, Duration: d}.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			b, err := r.Read()
			n += len(b)
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		if got := time.Since(start); got < d || got > d+time.Second {
			t.Errorf("rate %v: the reader ended after %v; want %v", rate, got, d)
		}
		if n == 0 {
			t.Errorf("rate %v: read nothing", rate)
		}
	}
}

func TestCloseEnds(t *testing.T) {
	r, err := YSB{}.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Read()
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if b, err := r.Read(); len(b) != 0 || err != io.EOF {
		t.Errorf("Read after Close = %d records, %v; want 0, io.EOF", len(b), err)
	}
}

func TestOpenErrors(t *testing.T) {
	ok := weir.SourceContext{Instance: 0, Parallelism: 1}
	tests := []struct {
		name string
		open func(weir.SourceContext) error
		ctx  weir.SourceContext
	}{
		{"instance", func(c weir.SourceContext) error { _, err := YSB{}.Open(c); return err }, weir.SourceContext{Instance: 2, Parallelism: 2}},
		{"parallelism", func(c weir.SourceContext) error { _, err := YSB{}.Open(c); return err }, weir.SourceContext{}},
		{"events", func(c weir.SourceContext) error { _, err := YSB{Events: -1}.Open(c); return err }, ok},
		{"rate", func(c weir.SourceContext) error { _, err := Nexmark{Rate: -1}.Open(c); return err }, ok},
		{"duration", func(c weir.SourceContext) error { _, err := Nexmark{Duration: -1}.Open(c); return err }, ok},
		{"batch", func(c weir.SourceContext) error { _, err := Zipf{Keys: 1, S: 1, BatchSize: -1}.Open(c); return err }, ok},
		{"keys", func(c weir.SourceContext) error { _, err := Zipf{S: 1}.Open(c); return err }, ok},
		{"exponent", func(c weir.SourceContext) error { _, err := Zipf{Keys: 5}.Open(c); return err }, ok},
	}
	for _, tt := range tests {
		if err := tt.open(tt.ctx); err == nil {
			t.Errorf("%s: got nil error; want one", tt.name)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	events, _ := YSBEvents(3, 1)
	tests := []YSBEvent{
		events[0], events[1], events[2],
		{},
		{UserID: `a"b\c/d`, PageID: "tab\tnl\ncr\r", AdID: "\x00\x1f\x7f", AdType: "é😀\u2028", EventType: "bad\xffutf8", EventTime: -5, IPAddress: "1.2.3.4"},
		{EventTime: 1<<63 - 1},
	}
	for i, e := range tests {
		line := e.AppendJSON([]byte("prefix"))
		if string(line[:6]) != "prefix" {
			t.Fatalf("event %d: AppendJSON lost the prefix", i)
		}
		line = line[6:]
		if !json.Valid(line) {
			t.Fatalf("event %d: invalid JSON %s", i, line)
		}
		var m map[string]string
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("event %d: %v in %s", i, err, line)
		}
		want := map[string]string{
			"user_id": e.UserID, "page_id": e.PageID, "ad_id": e.AdID, "ad_type": e.AdType,
			"event_type": e.EventType, "event_time": strconv.FormatInt(e.EventTime, 10), "ip_address": e.IPAddress,
		}
		if i == 4 {
			want["event_type"] = "bad\uFFFDutf8"
		}
		if len(m) != len(want) {
			t.Errorf("event %d: got %d fields; want %d", i, len(m), len(want))
		}
		for k, w := range want {
			if m[k] != w {
				t.Errorf("event %d, %s: got %q; want %q", i, k, m[k], w)
			}
		}
	}
}

func TestAppendJSONDoesNotAllocate(t *testing.T) {
	events, _ := YSBEvents(1, 1)
	buf := make([]byte, 0, 512)
	if allocs := testing.AllocsPerRun(100, func() { buf = events[0].AppendJSON(buf[:0]) }); allocs != 0 {
		t.Errorf("AppendJSON allocates %v times; want 0", allocs)
	}
}
