package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
)

type click struct {
	User string
	TS   int64
}

// countsTo builds a windowed count of clicks per user whose results go to
// a Parts output in dir.
func countsTo(j *weir.Job, in []click, crashAt int64, dir string) {
	src := weir.Source(j, "clicks", weir.SliceSource[click]{Records: in, BatchSize: 50})
	// A crash: the job fails when it meets the record at crashAt.
	src = weir.Map(src, func(c click) click {
		if c.TS == crashAt {
			panic("crash")
		}
		return c
	}, weir.Stateless(), weir.Name("crash"))
	timed := weir.EventTime(src, func(c click) int64 { return c.TS }, 10*time.Millisecond, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(c click) string { return c.User }), weir.Tumbling(50*time.Millisecond),
		weir.WindowOptions(weir.Name("count"))))
	weir.Sink(counts, file.Parts(dir, func(b []byte, r weir.WindowResult[string, int64]) []byte {
		return fmt.Appendf(b, "%s,%d,%d", r.Key, r.Start, r.Value)
	}), weir.Name("parts"))
}

func sortedLines(b []byte) []string {
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(l)
	return l
}

// A job whose results go to Parts, stopped partway as by a crash and run
// again from its checkpoints, leaves exactly the lines of a failure-free
// run: the lines written after the last complete checkpoint were never
// made visible, and are written once more.
func TestPartsExactlyOnce(t *testing.T) {
	in := make([]click, 20000)
	for i := range in {
		in[i] = click{User: fmt.Sprintf("u%d", i%23), TS: int64(i) / 10}
	}
	want := map[string]int64{}
	for _, c := range in {
		want[fmt.Sprintf("%s,%d", c.User, c.TS/50*50)]++
	}
	var wantLines []string
	for k, v := range want {
		wantLines = append(wantLines, fmt.Sprintf("%s,%d", k, v))
	}
	slices.Sort(wantLines)

	dir, ckpt := t.TempDir(), t.TempDir()
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(200), weir.Checkpoints(ckpt, 3, 2)}
	first := weir.NewJob("first", opts...)
	countsTo(first, in, 1437, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := first.Run(ctx); err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want it to crash", err)
	}
	visible, err := file.ReadParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, ".open")); len(visible) == 0 || err != nil || st.Size() == 0 {
		t.Fatalf("before the restart: %d bytes visible, open part: %v; the test needs both committed and uncommitted lines", len(visible), err)
	}
	second := weir.NewJob("second", opts...)
	countsTo(second, in, -1, dir)
	defer cancel()
	if err := second.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Fatal("the second run restored no checkpoint")
	}
	out, err := file.ReadParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedLines(out); !slices.Equal(got, wantLines) {
		t.Errorf("%d lines; want %d (visible before the restart: %d lines)", len(got), len(wantLines), len(sortedLines(visible)))
	}
}
