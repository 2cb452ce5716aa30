package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// freePorts returns a loopback port p such that p and p+1 are free now.
func freePorts(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1)))
		l.Close()
		if err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("no two free ports in a row")
	return 0
}

// scrapeMetrics gets url and parses it with expfmt; a refused connection
// (the server not up yet, or gone) is nil, nil.
func scrapeMetrics(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// recordsRead is the weir_records_read_total counter of each process in
// fams, by process label.
func recordsRead(t *testing.T, fams map[string]*dto.MetricFamily) map[string]float64 {
	t.Helper()
	f := fams["weir_records_read_total"]
	if f == nil {
		return nil
	}
	if f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("weir_records_read_total is a %v", f.GetType())
	}
	out := map[string]float64{}
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if l.GetName() == "process" {
				out[l.GetValue()] = m.Counter.GetValue()
			}
		}
	}
	return out
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// checkLabels checks that every weir_ series of a process-scope scrape
// is the job's and the process's own.
func checkLabels(t *testing.T, fams map[string]*dto.MetricFamily, process int) {
	t.Helper()
	for name, f := range fams {
		if !strings.HasPrefix(name, "weir_") {
			continue
		}
		for _, m := range f.Metric {
			got := map[string]string{}
			for _, l := range m.Label {
				got[l.GetName()] = l.GetValue()
			}
			if got["job"] != "ysb" || got["process"] != strconv.Itoa(process) {
				t.Errorf("process %d: %s has labels %v", process, name, got)
			}
		}
	}
	for _, name := range []string{"weir_epoch", "weir_epoch_latency_seconds", "go_goroutines"} {
		if fams[name] == nil {
			t.Errorf("process %d exports no %s", process, name)
		}
	}
}

// A YSB job of 2 processes under weir launch --metrics 127.0.0.1:P serves
// /metrics at P on process 0 and P+1 on process 1. Scraped while it runs
// and parsed with expfmt, each process's records counter is its own,
// grows, and stays within the job's input.
func TestLaunchMetrics(t *testing.T) {
	const events = 400_000
	port := freePorts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "launch", "-n", "2", "--", "run", "ysb", "--events", strconv.Itoa(events),
		"--rate", "50000", "--workers", "1", "--interval", "100ms", "--metrics", "127.0.0.1:"+strconv.Itoa(port))
	var errb strings.Builder
	lw := &lockedWriter{b: &errb}
	cmd.Stderr = lw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for i := range 2 {
		url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port+i)
		var seen []float64 // the counter's values > 0, in scrape order
		for len(seen) < 2 || seen[len(seen)-1] <= seen[0] {
			select {
			case err := <-done:
				t.Fatalf("the job ended (%v) before process %d's records counter was seen to grow (%v)\n%s", err, i, seen, lw.String())
			case <-time.After(20 * time.Millisecond):
			}
			fams, err := scrapeMetrics(url)
			if err != nil {
				t.Fatal(err)
			}
			if n := recordsRead(t, fams)[strconv.Itoa(i)]; n > 0 {
				checkLabels(t, fams, i)
				if n > events || len(seen) > 0 && n < seen[len(seen)-1] {
					t.Fatalf("process %d: records read %v after %v (the job reads %d)", i, n, seen, events)
				}
				seen = append(seen, n)
			}
		}
		// Every process's figures as this one heard them, each under
		// its own label: both, once the peer's first figures are in.
		var job map[string]*dto.MetricFamily
		var rs map[string]float64
		for deadline := time.Now().Add(time.Minute); len(rs) < 2; {
			var err error
			if job, err = scrapeMetrics(url + "?scope=job"); err != nil || job == nil {
				t.Fatalf("scope=job: %v", err)
			}
			if rs = recordsRead(t, job); time.Now().After(deadline) {
				t.Fatalf("process %d: scope=job's records counters are %v, want both processes", i, rs)
			}
		}
		checkInstanceFigures(t, job, i)
		for p := range rs {
			if p != "0" && p != "1" {
				t.Errorf("process %d: scope=job has a process %s", i, p)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("weir launch: %v\n%s", err, lw.String())
	}
	for i := range 2 {
		want := fmt.Sprintf("[%d] weir: --metrics serving http://127.0.0.1:%d/metrics", i, port+i)
		if !strings.Contains(lw.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, lw.String())
		}
	}
}

// --metrics refuses an address it cannot listen on, before or as the job
// starts, and a command that runs no job.
func TestMetricsFlagRefused(t *testing.T) {
	mustFail(t, []string{"run", "ysb", "--events", "10", "--metrics", "nohost"}, "--metrics", "nohost")
	mustFail(t, []string{"run", "ysb", "--events", "10", "--metrics", "127.0.0.1:70000"}, "--metrics", "70000")
	mustFail(t, []string{"explain", "ysb", "--metrics", "127.0.0.1:0"}, "--metrics 127.0.0.1:0", "explain runs none")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mustFail(t, []string{"run", "ysb", "--events", "10", "--metrics", l.Addr().String()}, "--metrics "+l.Addr().String(), "in use")
}

// checkInstanceFigures checks process i's per-instance and per-peer
// figures in a scrape: its source instances read no more than the
// process's records counter says and some records, some useful time was
// spent, and it sent the other process bytes.
func checkInstanceFigures(t *testing.T, fams map[string]*dto.MetricFamily, i int) {
	t.Helper()
	p := strconv.Itoa(i)
	sum := func(name string, match func(map[string]string) bool) (float64, int) {
		var v float64
		n := 0
		for _, m := range fams[name].GetMetric() {
			l := map[string]string{}
			for _, lp := range m.Label {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["process"] == p && match(l) {
				v += m.GetCounter().GetValue()
				n++
			}
		}
		return v, n
	}
	src := func(l map[string]string) bool { return strings.HasPrefix(l["operator"], "ysb-generator") }
	in, n := sum("weir_records_in_total", src)
	read := recordsRead(t, fams)[p]
	if n == 0 || in <= 0 || in > read {
		t.Errorf("process %d: its %d source instances took in %v records; the process read %v", i, n, in, read)
	}
	if u, _ := sum("weir_useful_seconds_total", func(map[string]string) bool { return true }); u <= 0 {
		t.Errorf("process %d: useful time %v", i, u)
	}
	peer := strconv.Itoa(1 - i)
	if b, n := sum("weir_peer_bytes_out_total", func(l map[string]string) bool { return l["peer"] == peer }); n != 1 || b <= 0 {
		t.Errorf("process %d: bytes out to process %s: %v (%d series)", i, peer, b, n)
	}
}
