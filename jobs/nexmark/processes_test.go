package nexmark_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/transport"
	"github.com/weirstream/weir/jobs/nexmark"
)

// addQuery builds process i's job of a query and returns its sinks.
func addQuery(t testing.TB, j *weir.Job, name string, g gen.Nexmark) (*weir.Collect[string], *nexmark.Checksum) {
	t.Helper()
	var lines weir.Collect[string]
	var sum nexmark.Checksum
	if err := nexmark.Add(name, weir.Source(j, "events", g), nexmark.Sinks{CSV: &lines, Sum: &sum}); err != nil {
		t.Fatal(err)
	}
	return &lines, &sum
}

// Each query over 2 processes in this one, on an in-process network, with
// 1 and 2 workers each, equals the reference; the sinks run on process 0.
func TestQueriesTwoProcesses(t *testing.T) {
	g := testGen(testEvents(t), 17)
	want := reference(t, g)
	for _, name := range nexmark.Names() {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, w), func(t *testing.T) {
				nets := transport.NewLocal(2)
				var lines [2]*weir.Collect[string]
				var sums [2]*nexmark.Checksum
				var errs [2]error
				var wg sync.WaitGroup
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				for i := range 2 {
					j := weir.NewJob("nexmark-"+name, weir.Workers(w), weir.EpochRecords(300), dataflow.WithNetwork(nets[i]))
					lines[i], sums[i] = addQuery(t, j, name, g)
					wg.Go(func() { errs[i] = j.Run(ctx) })
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("process %d: %v", i, err)
					}
				}
				if n := len(lines[1].Records()); n != 0 || sums[1].Rows != 0 {
					t.Errorf("process 1's sinks got %d lines, %d rows; sinks run on process 0", n, sums[1].Rows)
				}
				check(t, name, lines[0].Records(), *sums[0], want[name])
			})
		}
	}
}

// TestQueryChild is the body of a child process of TestQueriesAsProcesses;
// it runs only in one.
func TestQueryChild(t *testing.T) {
	name := os.Getenv("NEXMARK_TEST_QUERY")
	if name == "" {
		t.Skip("runs only as a child of TestQueriesAsProcesses")
	}
	self, _ := strconv.Atoi(os.Getenv("NEXMARK_TEST_SELF"))
	n, _ := strconv.ParseInt(os.Getenv("NEXMARK_TEST_EVENTS"), 10, 64)
	j := weir.NewJob("nexmark-"+name, weir.Workers(2), weir.BatchInterval(5*time.Millisecond),
		weir.Cluster(self, strings.Split(os.Getenv("NEXMARK_TEST_PEERS"), ","), "secret"))
	lines, sum := addQuery(t, j, name, testGen(n, 23))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatalf("process %d: %v", self, err)
	}
	if self == 0 {
		b, _ := json.Marshal(struct {
			Lines []string
			Rows  int64
			Sum   uint64
		}{lines.Records(), sum.Rows, sum.Sum})
		if err := os.WriteFile(os.Getenv("NEXMARK_TEST_OUT"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Each query run by 2 OS processes of this test binary over TCP, 2 workers
// each, with time epochs, equals the reference.
func TestQueriesAsProcesses(t *testing.T) {
	n := testEvents(t)
	want := reference(t, testGen(n, 23))
	for _, name := range nexmark.Names() {
		t.Run(name, func(t *testing.T) {
			var peers []string
			for range 2 {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				peers = append(peers, l.Addr().String())
				l.Close()
			}
			out := t.TempDir() + "/out.json"
			var cmds []*exec.Cmd
			var logs []*strings.Builder
			for i := range 2 {
				c := exec.Command(os.Args[0], "-test.run=^TestQueryChild$", "-test.v")
				c.Env = append(os.Environ(), "NEXMARK_TEST_QUERY="+name, "NEXMARK_TEST_SELF="+strconv.Itoa(i),
					"NEXMARK_TEST_PEERS="+strings.Join(peers, ","), "NEXMARK_TEST_OUT="+out,
					"NEXMARK_TEST_EVENTS="+strconv.FormatInt(n, 10))
				var b strings.Builder
				c.Stdout, c.Stderr = &b, &b
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, logs = append(cmds, c), append(logs, &b)
			}
			for i, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Fatalf("process %d: %v: %s", i, err, logs[i])
				}
			}
			var res struct {
				Lines []string
				Rows  int64
				Sum   uint64
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			got := final(name, res.Lines)
			if !slices.Equal(got, want[name]) {
				t.Errorf("%s: %d final rows, want %d", name, len(got), len(want[name]))
			}
			ws := nexmark.ChecksumOf(name, want[name])
			if res.Rows != ws.Rows || res.Sum != ws.Sum {
				t.Errorf("%s: checksum %d rows, sum %016x; want %v", name, res.Rows, res.Sum, &ws)
			}
		})
	}
}
