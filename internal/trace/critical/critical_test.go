package critical

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/trace"
)

const eps = 1e-9

// twoWorkers is the graph of the package's hand-drawn example: A works,
// sends at 4–5 a message B receives at 6–7 after waiting for it.
func twoWorkers() *trace.Trace {
	return &trace.Trace{Processes: 1, Ops: []string{"a", "b"},
		Workers: []trace.Worker{{Name: "a", Op: 0}, {Name: "b", Op: 1}},
		Events: []trace.Event{
			{Worker: 0, Kind: trace.Processing, Op: 0, Start: 0, End: 4},
			{Worker: 0, Kind: trace.Send, Start: 4, End: 5, Channel: 1, Seq: 0},
			{Worker: 0, Kind: trace.Processing, Op: 0, Start: 5, End: 10},
			{Worker: 1, Kind: trace.WaitInput, Start: 0, End: 6},
			{Worker: 1, Kind: trace.Recv, Start: 6, End: 7, Channel: 1, Seq: 0},
			{Worker: 1, Kind: trace.Processing, Op: 1, Start: 7, End: 10},
		}}
}

// cpOf returns the CP of the activity of worker w (or the message edge)
// starting at start.
func cpOf(t *testing.T, win Window, w int, message bool, start int64) float64 {
	t.Helper()
	for _, a := range win.Activities {
		if a.Worker == w && a.Message == message && a.Start == start && (a.End > a.Start || message) {
			return a.CP
		}
	}
	t.Fatalf("no activity of worker %d (message %v) at %d", w, message, start)
	return 0
}

func TestHandDrawn(t *testing.T) {
	x := NewIndex(twoWorkers())
	// Paths: A's chain to its end, and A's chain to the send, the
	// message and B's chain to its end: N = 2, window 10.
	w := x.Window(0, 10)
	if w.Paths != 2 {
		t.Fatalf("N = %v, want 2", w.Paths)
	}
	for _, c := range []struct {
		w       int
		message bool
		start   int64
		want    float64
	}{
		{0, false, 0, 2 * 4 / 20.0}, {0, false, 4, 2 * 1 / 20.0}, {0, false, 5, 1 * 5 / 20.0},
		{0, true, 5, 1 * 1 / 20.0}, {1, false, 6, 1 * 1 / 20.0}, {1, false, 7, 1 * 3 / 20.0}, {1, false, 0, 0},
	} {
		if got := cpOf(t, w, c.w, c.message, c.start); math.Abs(got-c.want) > eps {
			t.Errorf("worker %d message %v at %d: CP %v, want %v", c.w, c.message, c.start, got, c.want)
		}
	}
	// Truncated to [3, 8): the same paths, window 5.
	w = x.Window(3, 8)
	if w.Paths != 2 {
		t.Fatalf("[3,8): N = %v, want 2", w.Paths)
	}
	for _, c := range []struct {
		w       int
		message bool
		start   int64
		want    float64
	}{{0, false, 3, 0.2}, {0, false, 4, 0.2}, {0, false, 5, 0.3}, {0, true, 5, 0.1}, {1, false, 6, 0.1}, {1, false, 7, 0.1}} {
		if got := cpOf(t, w, c.w, c.message, c.start); math.Abs(got-c.want) > eps {
			t.Errorf("[3,8): worker %d message %v at %d: CP %v, want %v", c.w, c.message, c.start, got, c.want)
		}
	}
	s := NewSummary(x.T)
	s.Add(x.Window(0, 10))
	want := map[rowKey]float64{{"type", "processing"}: 0.8, {"type", "send"}: 0.1, {"type", "recv"}: 0.05,
		{"type", Transfer}: 0.05, {"operator", "a"}: 0.75, {"operator", "b"}: 0.2, {"pair", "a#0 → b#0"}: 0.05}
	for _, r := range s.Rows() {
		if v, ok := want[rowKey{r.Group, r.Name}]; ok && math.Abs(r.CP-v) > eps {
			t.Errorf("%s %s: CP %v, want %v", r.Group, r.Name, r.CP, v)
		}
		// Busy: A 10, B 4 of 14; processing 12, the pair's send and recv 2.
		if r.Group == "operator" && r.Name == "a" && math.Abs(r.Busy-10/14.0) > eps {
			t.Errorf("operator a busy %v, want %v", r.Busy, 10/14.0)
		}
		if r.Group == "pair" && r.Name == "a#0 → b#0" && math.Abs(r.Busy-2/14.0) > eps {
			t.Errorf("pair busy %v, want %v", r.Busy, 2/14.0)
		}
	}
}

func TestNoCriticalPath(t *testing.T) {
	tr := &trace.Trace{Processes: 1, Ops: []string{"a"}, Workers: []trace.Worker{{Name: "a"}, {Name: "b"}},
		Events: []trace.Event{{Worker: 0, Kind: trace.Processing, Start: 0, End: 5}, {Worker: 0, Kind: trace.WaitInput, Start: 5, End: 10},
			{Worker: 1, Kind: trace.WaitCredit, Start: 0, End: 10}}}
	x := NewIndex(tr)
	w := x.Window(0, 10)
	if w.Paths != 0 {
		t.Fatalf("N = %v, want 0", w.Paths)
	}
	for _, a := range w.Activities {
		if a.CP != 0 {
			t.Errorf("CP %v in a window without paths", a.CP)
		}
	}
	s := NewSummary(tr)
	s.Add(w)
	if s.Empty != 1 || s.Windows != 0 || Bottleneck(s.Rows()) == "" {
		t.Errorf("summary of an empty window: %+v", s)
	}
}

// A gap is traversable time: a worker with one activity and gaps around
// it has one path, and its gaps carry the rest of the window.
func TestGaps(t *testing.T) {
	tr := &trace.Trace{Processes: 1, Ops: []string{"a"}, Workers: []trace.Worker{{Name: "a"}},
		Events: []trace.Event{{Worker: 0, Kind: trace.Processing, Start: 2, End: 5}}}
	w := NewIndex(tr).Window(0, 10)
	if w.Paths != 1 || len(w.Activities) != 3 {
		t.Fatalf("N = %v, %d activities; want 1 and 3", w.Paths, len(w.Activities))
	}
	if !w.Activities[0].Gap || math.Abs(w.Activities[1].CP-0.3) > eps || math.Abs(w.Activities[2].CP-0.5) > eps {
		t.Errorf("activities %+v", w.Activities)
	}
}

// brute enumerates every path of w's graph from a start node to an end
// node and returns N and, per activity, the paths through it.
func brute(t *testing.T, w Window) (float64, []float64) {
	out := map[int32][]int{}
	in := map[int32]int{}
	nodes := map[int32]bool{}
	for k, a := range w.Activities {
		nodes[a.from], nodes[a.to] = true, true
		in[a.to]++
		if a.capacity() {
			out[a.from] = append(out[a.from], k)
		}
	}
	// Start nodes: a worker's first node, which no chain activity enters;
	// end nodes: its last, which no activity leaves.
	isStart, isEnd := map[int32]bool{}, map[int32]bool{}
	for _, a := range w.Activities {
		if !a.Message {
			isStart[a.from], isEnd[a.to] = true, true
		}
	}
	for _, a := range w.Activities {
		if !a.Message {
			delete(isStart, a.to)
			delete(isEnd, a.from)
		}
	}
	through := make([]float64, len(w.Activities))
	n := 0.0
	var path []int
	var walk func(u int32, length int64)
	walk = func(u int32, length int64) {
		if isEnd[u] {
			n++
			for _, k := range path {
				through[k]++
			}
			if length != w.End-w.Start {
				t.Fatalf("a path of length %d in a window of %d", length, w.End-w.Start)
			}
		}
		for _, k := range out[u] {
			path = append(path, k)
			a := w.Activities[k]
			walk(a.to, length+a.End-a.Start)
			path = path[:len(path)-1]
		}
	}
	for u := range isStart {
		walk(u, 0)
	}
	return n, through
}

// randomTrace makes a few workers' timelines of random activities, with
// random waits and gaps, and message edges between them.
func randomTrace(r *rand.Rand) *trace.Trace {
	kinds := []trace.Kind{trace.Processing, trace.Processing, trace.Serialization, trace.WaitInput, trace.WaitCredit, trace.Alignment}
	nw := 2 + r.IntN(3)
	tr := &trace.Trace{Processes: 1, Ops: []string{"x", "y", "z"}}
	var sends, recvs []int
	for w := range nw {
		tr.Workers = append(tr.Workers, trace.Worker{Name: "w", Instance: w, Op: uint16(w % 3)})
		at := int64(r.IntN(3))
		for at < 60 {
			d := int64(1 + r.IntN(8))
			k := kinds[r.IntN(len(kinds))]
			switch r.IntN(6) {
			case 0:
				k = trace.Send
				sends = append(sends, len(tr.Events))
			case 1:
				k = trace.Recv
				recvs = append(recvs, len(tr.Events))
			}
			tr.Events = append(tr.Events, trace.Event{Worker: uint32(w), Kind: k, Op: uint16(r.IntN(3)), Start: at, End: at + d})
			at += d + int64(r.IntN(3)/2) // sometimes a gap
		}
	}
	ch := uint64(1)
	r.Shuffle(len(recvs), func(i, j int) { recvs[i], recvs[j] = recvs[j], recvs[i] })
	for _, s := range sends {
		for k, rv := range recvs {
			se, re := tr.Events[s], tr.Events[rv]
			if re.Worker != se.Worker && re.Start >= se.End && r.IntN(2) == 0 {
				tr.Events[s].Channel, tr.Events[rv].Channel = ch, ch
				tr.Events[s].Seq, tr.Events[rv].Seq = 7, 7
				ch++
				recvs = append(recvs[:k], recvs[k+1:]...)
				break
			}
		}
	}
	return tr
}

// TestAgainstEnumeration is the property: on random small activity
// graphs, CP by path counting equals CP by enumerating the paths, and the
// CP of a window with a path sums to 1.
func TestAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 14))
	windows, withPaths, msgs := 0, 0, 0
	for range 300 {
		tr := randomTrace(r)
		x := NewIndex(tr)
		for _, w := range x.Windows(int64(5 + r.IntN(40))) {
			windows++
			for _, a := range w.Activities {
				if a.Message {
					msgs++
				}
			}
			n, through := brute(t, w)
			if math.Abs(n-w.Paths) > eps*n {
				t.Fatalf("window [%d,%d): N = %v, enumeration finds %v", w.Start, w.End, w.Paths, n)
			}
			sum := 0.0
			for k, a := range w.Activities {
				want := 0.0
				if n > 0 {
					want = through[k] * float64(a.End-a.Start) / (n * float64(w.End-w.Start))
				}
				if math.Abs(a.CP-want) > eps {
					t.Fatalf("window [%d,%d) activity %+v: CP %v, enumeration %v", w.Start, w.End, a, a.CP, want)
				}
				sum += a.CP
			}
			if n > 0 {
				withPaths++
				if math.Abs(sum-1) > eps {
					t.Fatalf("window [%d,%d): CP sums to %v", w.Start, w.End, sum)
				}
			}
		}
	}
	t.Logf("%d windows, %d with paths, %d message edges", windows, withPaths, msgs)
	if msgs < windows || withPaths < windows/4 || withPaths == windows {
		t.Errorf("%d of %d windows had paths: the generator should make both kinds often", withPaths, windows)
	}
}

// Path counts past float64's range still give CP that sums to 1.
func TestHugeCounts(t *testing.T) {
	tr := &trace.Trace{Processes: 1, Ops: []string{"a"}, Workers: []trace.Worker{{Name: "a"}, {Name: "b"}}}
	// Two workers swap a message every unit of time in both directions:
	// each crossing doubles the paths, 2^2000 in all.
	var ch uint64
	for i := int64(0); i < 2000; i++ {
		for w := uint32(0); w < 2; w++ {
			ch++
			tr.Events = append(tr.Events, trace.Event{Worker: w, Kind: trace.Send, Start: 3 * i, End: 3*i + 1, Channel: ch},
				trace.Event{Worker: 1 - w, Kind: trace.Recv, Start: 3*i + 2, End: 3*i + 3, Channel: ch})
		}
	}
	w := NewIndex(tr).Window(0, 6000)
	if !math.IsInf(w.Paths, 1) {
		t.Fatalf("N = %v, want beyond float64", w.Paths)
	}
	sum := 0.0
	for _, a := range w.Activities {
		sum += a.CP
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("CP sums to %v", sum)
	}
}
