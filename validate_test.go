package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// wordJob is a small keyed job: count the words of a few lines.
func wordJob(opts []weir.JobOption, op ...weir.Option) (*weir.Job, *weir.Collect[weir.WindowResult[string, int64]]) {
	j := weir.NewJob("words", opts...)
	words := weir.SliceSource[string]{Records: strings.Fields("a b a c b a")}
	keyed := weir.KeyBy(weir.Source(j, "words", words), func(w string) string { return w })
	out := &weir.Collect[weir.WindowResult[string, int64]]{}
	weir.Sink(weir.Count(weir.Window(keyed, weir.Global(), weir.WindowOptions(append(op, weir.Name("count"))...))), out)
	return j, out
}

// runRecovered runs j, turning a panic into a test failure.
func runRecovered(t *testing.T, j *weir.Job) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("Run panicked: %v", p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return j.Run(ctx)
}

// Every option value that cannot work is an error from Run (and Explain)
// naming the option, before anything starts.
func TestBadOptions(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	cases := []struct {
		opts []weir.JobOption
		op   []weir.Option
		want string
	}{
		{opts: []weir.JobOption{weir.Workers(0)}, want: "weir: Workers(0): must be at least 1"},
		{opts: []weir.JobOption{weir.Workers(-3)}, want: "weir: Workers(-3): must be at least 1"},
		{opts: []weir.JobOption{weir.Workers(100000)}, want: "weir: Workers(100000) exceeds the 128 key groups: a keyed operator can have at most one instance per key group; raise KeyGroups or lower Workers"},
		{opts: []weir.JobOption{weir.Workers(8), weir.KeyGroups(3)}, want: "Workers(8) exceeds the 3 key groups"},
		{opts: []weir.JobOption{weir.KeyGroups(0)}, want: "weir: KeyGroups(0): must be from 1 to 32768"},
		{opts: []weir.JobOption{weir.KeyGroups(-5)}, want: "weir: KeyGroups(-5)"},
		{opts: []weir.JobOption{weir.KeyGroups(32769)}, want: "weir: KeyGroups(32769)"},
		{opts: []weir.JobOption{weir.BatchInterval(0)}, want: "weir: BatchInterval(0s): must be positive"},
		{opts: []weir.JobOption{weir.BatchInterval(-time.Second)}, want: "weir: BatchInterval(-1s)"},
		{opts: []weir.JobOption{weir.EpochRecords(-1)}, want: "weir: EpochRecords(-1): must not be negative"},
		{opts: []weir.JobOption{weir.BatchSize(0)}, want: "weir: BatchSize(0): must be at least 1"},
		{opts: []weir.JobOption{weir.QueueDepth(-1)}, want: "weir: QueueDepth(-1): must be at least 1"},
		{opts: []weir.JobOption{weir.Partitioning("sideways")}, want: `weir: Partitioning("sideways"): unknown; want auto, hash, roundrobin, pkg or prompt`},
		{opts: []weir.JobOption{pebblestate.Dir("")}, want: `weir: pebblestate.Dir(""): the directory is empty`},
		{opts: []weir.JobOption{weir.Checkpoints("", 1, 1)}, want: `weir: Checkpoints("", 1, 1): the directory is empty`},
		{opts: []weir.JobOption{weir.Checkpoints(ckpt, 0, 3)}, want: "every must be at least 1"},
		{opts: []weir.JobOption{weir.Checkpoints(ckpt, 2, 0)}, want: "keep must be at least 1"},
		{opts: []weir.JobOption{weir.FromCheckpoint(filepath.Join(ckpt, "chk-2"))}, want: "FromCheckpoint(" + fmt.Sprintf("%q", filepath.Join(ckpt, "chk-2")) + ") needs Checkpoints"},
		{op: []weir.Option{weir.Parallelism(0)}, want: "weir: count: Parallelism(0): must be at least 1"},
		{op: []weir.Option{weir.Parallelism(200)}, want: "weir: count: Parallelism(200) exceeds the 128 key groups"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			j, _ := wordJob(c.opts, c.op...)
			if _, err := j.Explain(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Explain: %v; want an error containing %q", err, c.want)
			}
			j, out := wordJob(c.opts, c.op...)
			err := runRecovered(t, j)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Run: %v; want an error containing %q", err, c.want)
			}
			if n := len(out.Records()); n != 0 {
				t.Errorf("the job produced %d results although it was refused", n)
			}
		})
	}
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Errorf("a refused job touched its checkpoint directory: %v", err)
	}
}

// Options not given keep their defaults, and the default workers fit the
// key groups: a job with one key group runs.
func TestDefaultOptions(t *testing.T) {
	for _, opts := range [][]weir.JobOption{nil, {weir.KeyGroups(1)}, {weir.Workers(2), weir.KeyGroups(2)}} {
		j, out := wordJob(opts)
		if err := runRecovered(t, j); err != nil {
			t.Fatalf("Run: %v", err)
		}
		got := map[string]int64{}
		for _, r := range out.Records() {
			got[r.Key] = r.Value
		}
		if fmt.Sprint(got) != "map[a:3 b:2 c:1]" {
			t.Errorf("counts %v; want a:3 b:2 c:1", got)
		}
	}
	j, _ := wordJob([]weir.JobOption{weir.KeyGroups(1)})
	plan, err := j.Explain()
	if err != nil || !strings.HasPrefix(plan, "job words: 1 workers, 1 key groups, epochs every 1s") {
		t.Errorf("Explain with KeyGroups(1): %v\n%s", err, plan)
	}
}
