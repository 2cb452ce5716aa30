package weir_test

// Jobs run as real OS processes over TCP: the test binary starts copies
// of itself, so that what differs between processes (hash seeds, clocks,
// options) really differs.

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
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// structKey is a key the engine cannot hash as a string or an integer.
type structKey struct {
	Name string
	Len  int
}

// procScenario builds process I's job of a scenario and returns a
// function that lists its results as sorted lines.
type procScenario func(j *weir.Job) func() []string

var procScenarios = map[string]procScenario{
	"structkey": func(j *weir.Job) func() []string {
		in := make([]rec, 20000)
		for i := range in {
			in[i] = rec{ID: i, Key: fmt.Sprintf("k%d", i%17), TS: int64(i%10000) / 10}
		}
		s := weir.Source(j, "src", weir.SliceSource[rec]{Records: in, BatchSize: 64})
		timed := weir.EventTime(s, func(r rec) int64 { return r.TS }, 50*time.Millisecond)
		counts := weir.Count(weir.Window(weir.KeyBy(timed, func(r rec) structKey { return structKey{r.Key, len(r.Key)} }), weir.Tumbling(100*time.Millisecond)))
		out := &weir.Collect[weir.WindowResult[structKey, int64]]{}
		weir.Sink(counts, out)
		return func() []string {
			var l []string
			for _, r := range out.Records() {
				l = append(l, fmt.Sprintf("%v %d %d", r.Key, r.Start, r.Value))
			}
			slices.Sort(l)
			return l
		}
	},
}

// TestProcessChild is the body of a child process; it runs only in one.
func TestProcessChild(t *testing.T) {
	name := os.Getenv("WEIR_TEST_SCENARIO")
	if name == "" {
		t.Skip("runs only as a child of the multi-process tests")
	}
	self, _ := strconv.Atoi(os.Getenv("WEIR_TEST_SELF"))
	opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(500), weir.Partitioning(os.Getenv("WEIR_TEST_PARTITIONING")),
		weir.Cluster(self, strings.Split(os.Getenv("WEIR_TEST_PEERS"), ","), "secret")}
	if kg, _ := strconv.Atoi(os.Getenv("WEIR_TEST_KEYGROUPS_" + strconv.Itoa(self))); kg > 0 {
		opts = append(opts, weir.KeyGroups(kg))
	}
	j := weir.NewJob("processes", opts...)
	res := procScenarios[name](j)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatalf("process %d: %v", self, err)
	}
	if self == 0 {
		b, _ := json.Marshal(res())
		if err := os.WriteFile(os.Getenv("WEIR_TEST_OUT"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runAsProcesses runs a scenario as procs child processes and returns
// process 0's lines and each process's error output.
func runAsProcesses(t *testing.T, name string, procs int, env ...string) ([]string, []error) {
	t.Helper()
	var peers []string
	for range procs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, l.Addr().String())
		l.Close()
	}
	out := t.TempDir() + "/out.json"
	var cmds []*exec.Cmd
	var stderr []*strings.Builder
	for i := range procs {
		c := exec.Command(os.Args[0], "-test.run=^TestProcessChild$", "-test.v")
		c.Env = append(os.Environ(), "WEIR_TEST_SCENARIO="+name, "WEIR_TEST_SELF="+strconv.Itoa(i),
			"WEIR_TEST_PEERS="+strings.Join(peers, ","), "WEIR_TEST_OUT="+out)
		c.Env = append(c.Env, env...)
		var b strings.Builder
		c.Stdout, c.Stderr = &b, &b
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, stderr = append(cmds, c), append(stderr, &b)
	}
	errs := make([]error, procs)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			errs[i] = fmt.Errorf("%v: %s", err, stderr[i].String())
		}
	}
	var lines []string
	if b, err := os.ReadFile(out); err == nil {
		json.Unmarshal(b, &lines)
	}
	return lines, errs
}

// Struct keys hash alike in every process, so each key's windows meet at
// one owner: two processes give the single-process result.
func TestProcessesStructKey(t *testing.T) {
	for _, strategy := range []string{"hash", "roundrobin"} {
		single := weir.NewJob("single", weir.Workers(2), weir.EpochRecords(500), weir.Partitioning(strategy))
		res := procScenarios["structkey"](single)
		if err := runErr(t, single); err != nil {
			t.Fatal(err)
		}
		got, errs := runAsProcesses(t, "structkey", 2, "WEIR_TEST_PARTITIONING="+strategy)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: process %d: %v", strategy, i, err)
			}
		}
		if want := res(); !slices.Equal(got, want) {
			t.Errorf("%s: %d windows over 2 processes; want %d", strategy, len(got), len(want))
		}
	}
}

// Processes that disagree on an option that changes routing are refused,
// both naming the option with both values.
func TestProcessesDisagreeingOptions(t *testing.T) {
	_, errs := runAsProcesses(t, "structkey", 2, "WEIR_TEST_PARTITIONING=hash", "WEIR_TEST_KEYGROUPS_1=3")
	for i, want := range []string{"--key-groups is 128 here, 3 there", "--key-groups is 3 here, 128 there"} {
		if err := errs[i]; err == nil || !strings.Contains(err.Error(), "runs another job: "+want) {
			t.Errorf("process %d: %v; want a refusal saying %q", i, err, want)
		}
	}
}
