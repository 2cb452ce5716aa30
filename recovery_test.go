package weir_test

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// complete lists the complete checkpoints in dir.
func completeCkpts(t *testing.T, dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(dir + "/" + e.Name() + "/MANIFEST"); err == nil {
			out = append(out, strings.TrimLeft(strings.TrimPrefix(e.Name(), "chk-"), "0"))
		}
	}
	sort.Strings(out)
	return out
}

func crashMap(s weir.Stream[rec], crashAt int) weir.Stream[rec] {
	return weir.Map(s, func(r rec) rec {
		if r.ID == crashAt {
			panic("crash")
		}
		return r
	}, weir.Stateless(), weir.Name("crash"))
}

// An exactly-once output shared by several sink instances cannot be saved
// (each instance passes a checkpoint at its own moment): it is refused.
func TestRecoveryCollectParallelSink(t *testing.T) {
	j := weir.NewJob("parallel-sink", weir.Workers(3), weir.EpochRecords(100), weir.Checkpoints(t.TempDir(), 2, 2))
	s := weir.Source(j, "src", weir.SliceSource[rec]{Records: make([]rec, 100)})
	weir.Sink(s, &weir.Collect[rec]{}, weir.Name("out"), weir.Parallelism(3))
	if err := runErr(t, j); err == nil || !strings.Contains(err.Error(), "runs as one instance") {
		t.Errorf("Run = %v; want the parallel exactly-once output refused", err)
	}
}

// A restored run numbers its epochs after the checkpoint it started from,
// so it takes checkpoints of its own at once.
func TestRecoveryCheckpointsAfterRestore(t *testing.T) {
	in := make([]rec, 40000)
	for i := range in {
		in[i] = rec{ID: i}
	}
	build := func(j *weir.Job, crashAt int) {
		s := crashMap(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 50}), crashAt)
		weir.Sink(s, &weir.Collect[rec]{}, weir.Name("out"))
	}
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(100), weir.Checkpoints(dir, 2, 10)}
	first := weir.NewJob("first", opts...)
	build(first, 20000)
	t.Log(runErr(t, first))
	t.Log("after run 1:", completeCkpts(t, dir))
	second := weir.NewJob("second", opts...)
	build(second, 30000) // 10000 records = 100 epochs after the restore point
	t.Log(runErr(t, second), "restored from", second.Metrics().RestoredFrom)
	got := completeCkpts(t, dir)
	t.Log("after run 2:", got)
	third := weir.NewJob("third", opts...)
	build(third, 30000)
	t.Log(runErr(t, third), "restored from", third.Metrics().RestoredFrom)
	if third.Metrics().RestoredFrom <= second.Metrics().RestoredFrom {
		t.Errorf("run 2 processed 100 epochs (every=2) yet took no checkpoint: run 3 restores %d again", third.Metrics().RestoredFrom)
	}
}

// A task that has ended (a short source) does not hold up the process's
// later checkpoints: its final state goes into them.
func TestRecoveryCheckpointsAfterSourceEnds(t *testing.T) {
	short := make([]rec, 1000)
	long := make([]rec, 30000)
	for i := range short {
		short[i] = rec{ID: -1 - i}
	}
	for i := range long {
		long[i] = rec{ID: i}
	}
	build := func(j *weir.Job, crashAt int) {
		a := weir.Source(j, "short", weir.SliceSource[rec]{Records: short, BatchSize: 50})
		b := weir.Source(j, "long", weir.SliceSource[rec]{Records: long, BatchSize: 50})
		s := crashMap(weir.Union(a, b), crashAt)
		weir.Sink(s, &weir.Collect[rec]{}, weir.Name("out"))
	}
	dir := t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(100), weir.Checkpoints(dir, 2, 100)}
	first := weir.NewJob("first", opts...)
	build(first, 25000)
	t.Log(runErr(t, first))
	got := completeCkpts(t, dir)
	t.Log("complete checkpoints:", got)
	second := weir.NewJob("second", opts...)
	build(second, -1)
	t.Log(runErr(t, second), "restored from", second.Metrics().RestoredFrom)
	if second.Metrics().RestoredFrom < 100 {
		t.Errorf("crashed at epoch ~250 of the long source, but the latest complete checkpoint is %d", second.Metrics().RestoredFrom)
	}
}

var _ = fmt.Sprint

// A late record right after a restore is judged against the restored
// watermark, under hash and roundrobin (whose combiner sends its first
// epoch raw), by window instances with and without saved state.
func lateInput() []rec {
	in := make([]rec, 30000)
	for i := range in {
		in[i] = rec{ID: i, Key: "b", TS: int64(i) / 10}
		if i < 200 {
			in[i].Key = fmt.Sprintf("a%d", i%20)
		}
		if i >= 3000 && i%5 == 2 {
			in[i] = rec{ID: i, Key: fmt.Sprintf("a%d", (i/5)%20), TS: 1}
		}
	}
	return in
}

func lateCount(j *weir.Job, in []rec, crashAt int) *weir.Collect[weir.WindowResult[string, int64]] {
	s := crashMap(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 50}), crashAt)
	timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 0, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) string { return r.Key }), weir.Tumbling(100*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))))
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(counts, out, weir.Name("out"))
	return out
}

func TestRecoveryLateAfterRestore(t *testing.T) {
	in := lateInput()
	for _, strategy := range []string{"hash", "roundrobin", "prompt", "pkg"} {
		for _, workers := range []int{1, 2, 4} {
			desc := fmt.Sprintf("%s workers %d", strategy, workers)
			opts := func(dir string) []weir.JobOption {
				return []weir.JobOption{weir.Workers(workers), weir.EpochRecords(100), weir.Partitioning(strategy)}
			}
			plain := weir.NewJob("plain", opts("")...)
			wantOut := lateCount(plain, in, -1)
			if err := runErr(t, plain); err != nil {
				t.Fatal(err)
			}
			want := countsOf(wantOut.Records())
			dir := t.TempDir()
			o := append(opts(dir), weir.Checkpoints(dir, 1, 2))
			first := weir.NewJob("first", o...)
			lateCount(first, in, 9000)
			if err := runErr(t, first); err == nil {
				t.Fatal("no crash")
			}
			second := weir.NewJob("second", o...)
			out := lateCount(second, in, -1)
			if err := runErr(t, second); err != nil {
				t.Errorf("%s: restored run failed: %v", desc, firstLine(err))
				continue
			}
			got := countsOf(out.Records())
			bad := 0
			for k, v := range got {
				if want[k] != v {
					if bad < 3 {
						t.Errorf("%s (restored %d): %s = %d, want %d", desc, second.Metrics().RestoredFrom, k, v, want[k])
					}
					bad++
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d windows, want %d", desc, len(got), len(want))
			}
		}
	}
}

func firstLine(err error) string { s, _, _ := strings.Cut(err.Error(), "\n"); return s }

type skey struct {
	K string
	N int
}

// Struct keys hash alike in every run, so window state saved by one OS
// process is found by the next. The two runs are separate processes:
// WEIR_RECOVERY_PHASE=1 crashes, WEIR_RECOVERY_PHASE=2 restores.
func TestRecoveryStructKeyMicro(t *testing.T) {
	phase, dir, strategy := os.Getenv("WEIR_RECOVERY_PHASE"), os.Getenv("WEIR_RECOVERY_DIR"), os.Getenv("WEIR_RECOVERY_STRATEGY")
	if phase == "" {
		for _, strategy := range []string{"hash", "roundrobin", "prompt", "pkg"} {
			dir := t.TempDir()
			for _, ph := range []string{"1", "2"} {
				cmd := exec.Command(os.Args[0], "-test.run=TestRecoveryStructKeyMicro$", "-test.v")
				cmd.Env = append(os.Environ(), "WEIR_RECOVERY_PHASE="+ph, "WEIR_RECOVERY_DIR="+dir, "WEIR_RECOVERY_STRATEGY="+strategy)
				out, err := cmd.CombinedOutput()
				for _, l := range strings.Split(string(out), "\n") {
					if strings.Contains(l, "recovery_test") || strings.Contains(l, "RECOVERY") {
						t.Log(strategy, ph, l)
					}
				}
				if ph == "2" && err != nil {
					t.Errorf("%s: restored run: %v", strategy, err)
				}
			}
		}
		return
	}
	in := make([]rec, 20000)
	for i := range in {
		in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%13), TS: int64(i) / 10}
	}
	build := func(j *weir.Job, crashAt int) *weir.Collect[weir.WindowResult[skey, int64]] {
		s := crashMap(weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 50}), crashAt)
		timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 0, weir.Name("time"))
		counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) skey { return skey{r.Key, 1} }), weir.Tumbling(1000*time.Millisecond),
			weir.WindowOptions(weir.Name("count"))))
		out := &weir.Collect[weir.WindowResult[skey, int64]]{}
		weir.Sink(counts, out, weir.Name("out"))
		return out
	}
	opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(100), weir.Partitioning(strategy), weir.Checkpoints(dir, 1, 2)}
	if phase == "1" {
		first := weir.NewJob("first", opts...)
		build(first, 9050)
		if err := runErr(t, first); err == nil {
			t.Fatal("no crash")
		}
		return
	}
	second := weir.NewJob("second", opts...)
	out := build(second, -1)
	if err := runErr(t, second); err != nil {
		t.Fatalf("%s: %v", strategy, firstLine(err))
	}
	got := map[string]int64{}
	n := map[string]int{}
	for _, r := range out.Records() {
		k := fmt.Sprintf("%s@%d", r.Key.K, r.Start)
		got[k] += r.Value
		n[k]++
	}
	want := map[string]int64{}
	for _, r := range in {
		want[fmt.Sprintf("%s@%d", r.Key, r.TS/1000*1000)]++
	}
	bad := 0
	for k, c := range n {
		if c != 1 || got[k] != want[k] {
			if bad < 3 {
				t.Errorf("%s (restored %d): window %s emitted %d times, total %d, want once with %d", strategy, second.Metrics().RestoredFrom, k, c, got[k], want[k])
			}
			bad++
		}
	}
}
