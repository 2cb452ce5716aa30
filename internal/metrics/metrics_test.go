package metrics

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"
)

func sample() ProcessStats {
	return ProcessStats{Process: 1, Time: 1700000000000000000, Epoch: 42, Watermark: 1699999999000, WatermarkLag: time.Second,
		Records: 1 << 40, Final: true,
		Latency: LatencyStats{Count: 7, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond,
			P999: 4 * time.Millisecond, Max: 5 * time.Millisecond, Sum: 20 * time.Millisecond},
		Instances: []InstanceStats{
			{Operator: "events→filter", Instance: 0, Process: 1, Source: true, RecordsIn: 100, RecordsOut: 60,
				Useful: time.Second, Backpressure: 2 * time.Second, Lifetime: 4 * time.Second, Epoch: 42, Watermark: -1 << 63,
				Backlog: 1 << 33, KnowsBacklog: true},
			{Operator: "count→sink", Instance: 3, Process: 1, Running: true, RecordsIn: 60, BytesIn: 999, BytesOut: 5, Queue: 12,
				Idle: time.Minute, KeyGroupLo: 64, KeyGroups: []int64{1, 0, -3, 1 << 50}},
			{Operator: "events→filter", Instance: 1, Process: 1},
		},
		Peers:       []PeerStats{{Peer: 0, BytesOut: 1, FramesOut: 2, BytesIn: 3, FramesIn: 4, CreditWait: 5}},
		Checkpoints: []CheckpointStats{{ID: 3, Epoch: 40, Start: 17, Duration: 8, Alignment: 2, Bytes: 4096, Complete: true}},
		Loads:       []KeyGroupLoad{{Operator: "count→sink", Counts: []int64{5, 6, 7}}},
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, ps := range []ProcessStats{sample(), {}, {Process: 3, Instances: []InstanceStats{{Operator: ""}}}} {
		b := Encode(nil, ps)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, ps) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, ps)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	b := Encode(nil, sample())
	for i := 0; i < len(b); i++ {
		if _, err := Decode(b[:i]); err == nil {
			t.Errorf("a summary cut to %d of %d bytes decoded", i, len(b))
		}
	}
	if _, err := Decode(append(bytes.Clone(b), 0)); err == nil {
		t.Error("a trailing byte was accepted")
	}
	v := bytes.Clone(b)
	v[2] = 9
	if _, err := Decode(v); err == nil {
		t.Error("version 9 was accepted")
	}
	// A list that claims more elements than the message has bytes.
	huge := append([]byte(encMagic), encVersion, 0, 0xff, 0xff, 0xff, 0x7f)
	if _, err := Decode(huge); err == nil {
		t.Error("a string table of 2^28 entries was accepted")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, sample()))
	f.Add(Encode(nil, ProcessStats{}))
	f.Add([]byte("WM\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes encodes to a message that decodes the same.
		again, err := Decode(Encode(nil, ps))
		if err != nil {
			t.Fatalf("re-encoded summary fails: %v", err)
		}
		if !reflect.DeepEqual(again, ps) {
			t.Fatalf("re-encoding changed the summary:\n%+v\n%+v", again, ps)
		}
	})
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestRates(t *testing.T) {
	// 1000 records in, 250 out, 2 s useful of a 10 s life.
	s := InstanceStats{Operator: "op", RecordsIn: 1000, RecordsOut: 250, Useful: 2 * time.Second,
		Idle: 5 * time.Second, Backpressure: 3 * time.Second, Lifetime: 10 * time.Second}
	r := s.Rates()
	want := Rates{Processing: 500, Output: 125, ObservedIn: 100, ObservedOut: 25}
	if !near(r.Processing, want.Processing) || !near(r.Output, want.Output) || !near(r.ObservedIn, want.ObservedIn) || !near(r.ObservedOut, want.ObservedOut) {
		t.Fatalf("rates %+v, want %+v", r, want)
	}
	// Over an interval: 600 more in and 1 s more useful in 4 s.
	later := s
	later.RecordsIn, later.Useful, later.Lifetime = 1600, 3*time.Second, 14*time.Second
	d := Delta(s, later)
	if r := d.Rates(); !near(r.Processing, 600) || !near(r.ObservedIn, 150) || r.Output != 0 {
		t.Fatalf("interval rates %+v, want processing 600, observed 150, output 0", r)
	}
	// Two instances of one operator: rates add up, times too.
	other := InstanceStats{Operator: "op", Instance: 1, RecordsIn: 300, Useful: time.Second, Lifetime: 10 * time.Second}
	ops := Operators([]InstanceStats{s, other})
	if len(ops) != 1 || ops[0].Instances != 2 || ops[0].RecordsIn != 1300 || !near(ops[0].Processing, 800) ||
		!near(ops[0].Busy, 3.0/20) || !near(ops[0].Backpressured, 3.0/20) {
		t.Fatalf("operator %+v", ops)
	}
	if (InstanceStats{RecordsIn: 5}).Rates() != (Rates{}) {
		t.Fatal("rates without time are not 0")
	}
}

func TestLoadsSum(t *testing.T) {
	js := JobStats{Processes: []ProcessStats{
		{Loads: []KeyGroupLoad{{Operator: "b", Counts: []int64{1, 2}}, {Operator: "a", Counts: []int64{5}}}},
		{Loads: []KeyGroupLoad{{Operator: "b", Counts: []int64{10, 20}}}},
	}}
	want := []KeyGroupLoad{{Operator: "a", Counts: []int64{5}}, {Operator: "b", Counts: []int64{11, 22}}}
	if got := js.Loads(); !reflect.DeepEqual(got, want) {
		t.Fatalf("loads %v, want %v", got, want)
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry(0)
	in := NewInstance("a", 0, 0, false)
	r.Add(in)
	in.Start(100)
	in.AddIn(10)
	in.AddBusy(50)
	in.AddBlocked(20)
	in.AddIdle(5)
	in.End(200)
	l := r.Load("k", 4)
	c1, c2 := l.Counter(), l.Counter()
	c1.N[1], c2.N[1], c2.N[3] = 2, 3, 1
	c1.Publish()
	c2.Publish()
	for ms := 1; ms <= 100; ms++ {
		r.Epoch(uint64(ms), 1000, time.Duration(ms)*time.Millisecond, ms == 100)
	}
	r.CheckpointReported(1, 10, 1000)
	r.CheckpointReported(1, 10, 1300)
	r.CheckpointWritten(1, 77, 2000)
	r.CheckpointComplete(1)
	ps := r.Snapshot(time.Unix(0, 5000))
	st := ps.Instances[0]
	if st.RecordsIn != 10 || st.Useful != 30 || st.Backpressure != 20 || st.Idle != 5 || st.Lifetime != 100 {
		t.Fatalf("instance %+v", st)
	}
	if !reflect.DeepEqual(ps.Loads, []KeyGroupLoad{{Operator: "k", Counts: []int64{0, 5, 0, 1}}}) || c1.N[1] != 0 {
		t.Fatalf("loads %v", ps.Loads)
	}
	lat := ps.Latency
	// HDR keeps 3 significant digits.
	if lat.Count != 100 || lat.P50 < 49*time.Millisecond || lat.P50 > 51*time.Millisecond || lat.Max < 99*time.Millisecond || lat.Max > 101*time.Millisecond || !ps.Final {
		t.Fatalf("latency %+v", lat)
	}
	want := CheckpointStats{ID: 1, Epoch: 10, Start: 1000, Duration: 1000, Alignment: 300, Bytes: 77, Complete: true}
	if len(ps.Checkpoints) != 1 || ps.Checkpoints[0] != want {
		t.Fatalf("checkpoints %+v, want %+v", ps.Checkpoints, want)
	}
	if ps.WatermarkLag != time.Duration(5000-1000*int64(time.Millisecond)) {
		t.Fatalf("lag %v", ps.WatermarkLag)
	}
}

// An instance that starts again after it ended runs until its next end,
// and its lifetime adds up its runs.
func TestInstanceLives(t *testing.T) {
	in := NewInstance("a", 0, 0, false)
	if in.Running() {
		t.Fatal("running before it started")
	}
	in.Start(100)
	in.End(150)
	if in.Running() || in.Lifetime(1000) != 50 {
		t.Fatalf("after its first run: running %v, lifetime %v; want false, 50ns", in.Running(), in.Lifetime(1000))
	}
	in.Start(400)
	if !in.Running() || in.Lifetime(430) != 80 {
		t.Fatalf("in its second run: running %v, lifetime %v; want true, 80ns", in.Running(), in.Lifetime(430))
	}
	in.End(500)
	if st := in.Stats(1000); st.Running || st.Lifetime != 150 {
		t.Fatalf("after its second run: running %v, lifetime %v; want false, 150ns", st.Running, st.Lifetime)
	}
}

// A process's epoch, without a terminal instance that ended one, is the
// one its running instances reached: an instance that waits to take part
// (an absent keyed instance, at epoch 0) does not hold it back; once none
// runs, every instance counts.
func TestCompletedOf(t *testing.T) {
	ins := []InstanceStats{{Epoch: 0, Watermark: 0}, {Epoch: 40, Watermark: 900, Running: true}, {Epoch: 42, Watermark: 950, Running: true}}
	if e, wm := completedOf(ins); e != 40 || wm != 900 {
		t.Errorf("epoch %d, watermark %d; want 40 and 900", e, wm)
	}
	for i := range ins {
		ins[i].Running = false
	}
	if e, wm := completedOf(ins); e != 0 || wm != 0 {
		t.Errorf("none running: epoch %d, watermark %d; want 0 and 0", e, wm)
	}
}
