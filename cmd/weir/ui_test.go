package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/transport"
	"github.com/weirstream/weir/jobs/ysb"
)

// chromium is Debian's headless browser, which .ci/run installs.
const chromium = "/usr/bin/chromium"

// The dashboard of a running 2-process YSB job, in headless Chromium:
// process 1's page (which shows the whole job) draws the plan's tasks and
// a records figure that grows while it polls; process 0's page, loaded
// after, shows more records still and an epoch that advances; each page
// comes to show both processes (the peers' figures arrive at their epoch
// ends, also from a process without terminal tasks); the keyed
// operators start on process 0's instance alone, and the page's rescale
// control, clicked, moves half the key groups to process 1's
// (clickRescale); and a screenshot of it after several seconds of
// history is saved outside the repository.
func TestDashboardInChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Debian's chromium at %s (%v): install it with `apt-get install -y chromium` (.ci/run does)", chromium, err)
	}
	base := freePortPair(t)
	jobs := runDashboardJob(t, base)
	topo, err := jobs[0].Topology()
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	for _, tk := range topo.Tasks {
		tasks = append(tasks, tk.Name)
	}
	b := startBrowser(t, fmt.Sprintf("http://127.0.0.1:%d/", base+1), 1400, 1000)
	first := waitPage(t, b, "the graph and a records figure", func(f pageFigures) bool { return len(f.Nodes) > 0 && f.Records > 0 })
	second := waitPage(t, b, "records to grow and a throughput", func(f pageFigures) bool {
		return f.Records > first.Records && f.Throughput != "" && f.Processes == "2 of 2"
	})
	b.navigate(t, fmt.Sprintf("http://127.0.0.1:%d/", base))
	third := waitPage(t, b, "process 0's page to show an epoch", func(f pageFigures) bool { return len(f.Nodes) > 0 && f.Epoch > 0 })
	fourth := waitPage(t, b, "process 0's page to chart 8 samples and a later epoch", func(f pageFigures) bool {
		return f.Samples >= 8 && f.Epoch > third.Epoch && f.Records > third.Records && f.Processes == "2 of 2"
	})
	for i, f := range []pageFigures{first, second, third, fourth} {
		if !slices.Equal(f.Nodes, tasks) {
			t.Errorf("load %d: graph nodes %q, want the plan's tasks %q", i+1, f.Nodes, tasks)
		}
		if f.Error != "" {
			t.Errorf("load %d: the page shows an error: %s", i+1, f.Error)
		}
		if f.Processes != "1 of 2" && f.Processes != "2 of 2" {
			t.Errorf("load %d: processes tile %q", i+1, f.Processes)
		}
	}
	if third.Records <= second.Records {
		t.Errorf("records on the later page %d, not more than the earlier's %d", third.Records, second.Records)
	}
	clickRescale(t, b, jobs)
	shot := filepath.Join(os.TempDir(), "weir-dashboard.png")
	b.screenshot(t, 1400, shot)
	t.Logf("figures: %+v, then %+v, then %+v, then %+v", first, second, third, fourth)
	t.Logf("screenshot of the dashboard: %s", shot)
}

// pageFigures are what the page shows, read off its DOM.
type pageFigures struct {
	Records, Epoch int64
	Throughput     string
	Nodes          []string
	Samples        int
	Processes      string
	Error          string
}

const readFigures = `(() => {
  // Still loading while any element read below is not parsed yet.
  if (["records", "epoch", "throughput", "processes", "updated", "error"].some((id) => !document.getElementById(id))) return {};
  const v = (id) => document.getElementById(id).dataset.value;
  return {Records: Number(v("records")) || 0, Epoch: Number(v("epoch")) || 0, Throughput: v("throughput") || "",
    Nodes: [...document.querySelectorAll("#graph .node")].map((n) => n.dataset.task),
    Samples: Number(document.getElementById("updated").dataset.samples) || 0,
    Processes: document.getElementById("processes").textContent, Error: document.getElementById("error").textContent};
})()`

// waitPage reads the page's figures until cond holds (a minute at most).
func waitPage(t *testing.T, b *browser, what string, cond func(pageFigures) bool) pageFigures {
	t.Helper()
	var f pageFigures
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		f = pageFigures{}
		b.eval(t, readFigures, &f)
		if cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the page shows %+v", what, f)
		}
	}
}

// runDashboardJob runs YSB as two processes of one job over an in-process
// network, each serving its dashboard on base+process as --ui asks, until
// the test ends; the keyed operators' key groups start on instance 0.
func runDashboardJob(t *testing.T, base int) []*weir.Job {
	nets := transport.NewLocal(2)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var jobs []*weir.Job
	for i := range 2 {
		job := weir.NewJob("ysb", weir.Workers(1), weir.ActiveInstances(1), weir.BatchInterval(300*time.Millisecond), dataflow.WithNetwork(nets[i]))
		g := gen.YSB{Rate: 20_000, Events: 1 << 40, Seed: 1}
		weir.Sink(ysb.Query(weir.Source(job, "ysb-generator", g), ysb.FromAds(g.Ads()), time.Second), &ysb.Collector{}, weir.Name("collect"))
		of := observeFlags{ui: fmt.Sprintf("127.0.0.1:%d", base)}
		stop, err := of.start(job)
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		t.Cleanup(stop)
		jobs = append(jobs, job)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := job.Run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("process %d: %v", i, err)
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() }) // runs before the servers stop
	return jobs
}

// freePortPair returns a port p such that p and p+1 are free on loopback.
func freePortPair(t *testing.T) int {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("found no two free consecutive ports")
	return 0
}
