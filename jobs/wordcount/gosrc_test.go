package wordcount_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/transport"
	"github.com/weirstream/weir/jobs/skew"
	"github.com/weirstream/weir/jobs/wordcount"
)

// goSourceFiles returns *.go files of the Go source tree, in lexical
// order, until they hold at least size bytes.
func goSourceFiles(t *testing.T, size int64) []string {
	t.Helper()
	dir, err := skew.GoSourceDir()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var total int64
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || total >= size {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		paths = append(paths, path)
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total < size {
		t.Fatalf("the *.go files under %s hold %d bytes, want %d", dir, total, size)
	}
	return paths
}

// runWordcountJob adds the word count over paths to job, runs it and
// returns the sorted results.
func runWordcountJob(t *testing.T, job *weir.Job, paths []string) []wordcount.Result {
	t.Helper()
	col := &weir.Collect[wordcount.Result]{}
	weir.Sink(wordcount.Query(weir.Source(job, "lines", file.Lines(paths, file.Options{}))), col, weir.Name("collect"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := job.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := col.Records()
	wordcount.Sort(got)
	return got
}

// TestWordcountGoSource counts the words of real text, the Go source
// tree, whose skew is that of natural language (a few tokens such as "}",
// "err" and ":=" make a large share), under every partitioning strategy.
func TestWordcountGoSource(t *testing.T) {
	size := int64(4 << 20)
	if testing.Short() {
		size = 1 << 20
	}
	paths := goSourceFiles(t, size)
	want := pairs(wordcount.Reference(readLines(t, paths)))
	if len(want) < 10_000 {
		t.Fatalf("only %d distinct words in %d files", len(want), len(paths))
	}
	for _, s := range []string{"hash", "roundrobin", "pkg", "prompt"} {
		for _, w := range []int{1, 2, 4} {
			for _, ep := range []struct {
				name string
				opts []weir.JobOption
			}{
				{"interval", nil},
				{"records", []weir.JobOption{weir.EpochRecords(1_000)}},
			} {
				t.Run(fmt.Sprintf("%s/workers=%d/epochs=%s", s, w, ep.name), func(t *testing.T) {
					opts := append([]weir.JobOption{weir.Workers(w), weir.Partitioning(s)}, ep.opts...)
					job := weir.NewJob("wordcount", opts...)
					got := runWordcountJob(t, job, paths)
					gp := pairs(got)
					if len(gp) != len(want) {
						t.Errorf("%d distinct words, want %d", len(gp), len(want))
					}
					for i := range min(len(gp), len(want)) {
						if gp[i] != want[i] {
							t.Fatalf("first difference at %d: got %q:%d, want %q:%d", i, gp[i].word, gp[i].count, want[i].word, want[i].count)
						}
					}
					st := job.PartitionStats()
					if len(st) != 1 || st[0].Strategy != s || st[0].Partitions != w {
						t.Errorf("PartitionStats() = %+v; want one entry, strategy %s over %d partitions", st, s, w)
					}
				})
			}
		}
	}
}

// TestWordcountGoSourceProcesses counts the Go source tree's words over
// two and three processes (connected in memory) under every strategy and
// auto: process 0's sink gets exactly the plain count.
func TestWordcountGoSourceProcesses(t *testing.T) {
	paths := goSourceFiles(t, 1<<20)
	want := pairs(wordcount.Reference(readLines(t, paths)))
	for _, s := range []string{"auto", "hash", "roundrobin", "pkg", "prompt"} {
		for _, procs := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/processes=%d", s, procs), func(t *testing.T) {
				nets := transport.NewLocal(procs)
				cols := make([]*weir.Collect[wordcount.Result], procs)
				errs := make([]error, procs)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				var wg sync.WaitGroup
				for i := range procs {
					job := weir.NewJob("wordcount", weir.Workers(2), weir.Partitioning(s), weir.EpochRecords(2_000), dataflow.WithNetwork(nets[i]))
					cols[i] = &weir.Collect[wordcount.Result]{}
					weir.Sink(wordcount.Query(weir.Source(job, "lines", file.Lines(paths, file.Options{}))), cols[i], weir.Name("collect"))
					wg.Go(func() { errs[i] = job.Run(ctx) })
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("process %d: %v", i, err)
					}
				}
				got := cols[0].Records()
				wordcount.Sort(got)
				if gp := pairs(got); !slices.Equal(gp, want) {
					t.Errorf("%d distinct words, want %d", len(gp), len(want))
				}
			})
		}
	}
}
