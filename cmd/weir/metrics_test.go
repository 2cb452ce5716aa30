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
		job, err := scrapeMetrics(url + "?scope=job")
		if err != nil || job == nil {
			t.Fatalf("scope=job: %v", err)
		}
		// Every process's figures as this one heard them, each under
		// its own label, and always its own.
		rs := recordsRead(t, job)
		if _, ok := rs[strconv.Itoa(i)]; !ok || len(rs) > 2 {
			t.Errorf("process %d: scope=job's records counters are %v", i, rs)
		}
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
