package prom_test

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/prom"
)

type fixed weir.JobStats

func (f fixed) Stats() weir.JobStats { return weir.JobStats(f) }

const t0 = int64(1_700_000_000) * 1e9 // the summaries' wall clock, Unix ns

// stats is a 3-process job as process 1 sees it: it has heard from
// process 0, not yet from process 2.
func stats() fixed {
	return fixed{Job: "ysb", Self: 1, Processes: []weir.ProcessStats{
		{Process: 0, Time: t0 - 2e9, Epoch: 7, Watermark: math.MinInt64, Records: 1000,
			Instances: []weir.InstanceStats{{Operator: "src", Instance: 0, Process: 0, Source: true, RecordsIn: 1000, RecordsOut: 1000}},
			Latency:   metrics.LatencyStats{Count: 7, P50: 10 * time.Millisecond, Max: 40 * time.Millisecond, Sum: 90 * time.Millisecond}},
		{Process: 1, Time: t0, Epoch: 9, Watermark: (t0/1e6 - 2500), Records: 2500,
			Instances: []weir.InstanceStats{
				{Operator: "src→filter", Instance: 1, Process: 1, Source: true, RecordsIn: 2500, RecordsOut: 800, BytesOut: 6400,
					Useful: 1500 * time.Millisecond, Idle: 250 * time.Millisecond, Backpressure: 2 * time.Second, Epoch: 9, Watermark: math.MinInt64},
				{Operator: "count", Instance: 1, Process: 1, RecordsIn: 1600, RecordsOut: 12, BytesIn: 3200, Queue: 3,
					Epoch: 8, Watermark: t0/1e6 - 4000, KeyGroupLo: 64, KeyGroups: []int64{5, 0, 11}},
			},
			Peers: []metrics.PeerStats{{Peer: 0, BytesOut: 6400, FramesOut: 9, BytesIn: 3200, FramesIn: 4, CreditWait: 125 * time.Millisecond},
				{Peer: 2, BytesOut: 10, FramesOut: 1}},
			Checkpoints: []metrics.CheckpointStats{
				{ID: 3, Epoch: 6, Duration: time.Second, Alignment: 50 * time.Millisecond, Bytes: 4096, Complete: true},
				{ID: 4, Epoch: 8, Duration: 2 * time.Second, Alignment: 20 * time.Millisecond, Bytes: 8192, Complete: true},
				{ID: 5, Epoch: 9, Bytes: 1},
			},
			Latency: metrics.LatencyStats{Count: 9, P50: 20 * time.Millisecond, P90: 30 * time.Millisecond, P99: 50 * time.Millisecond,
				P999: 70 * time.Millisecond, Max: 80 * time.Millisecond, Sum: 250 * time.Millisecond}},
		{Process: 2},
	}, Critical: []metrics.Participation{{Group: "operator", Name: "count", CP: 0.75, Busy: 0.5}},
		Autoscale: &metrics.AutoscaleStats{Decisions: 3, Differed: 1, Wanted: 12, Need: 3, Running: 2}}
}

// families parses a text exposition with expfmt.
func families(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("expfmt: %v", err)
	}
	return fams
}

// series returns the family's series with exactly the labels want.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if reflect.DeepEqual(got, want) {
			return m
		}
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return math.NaN()
}

func scrape(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func lbl(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// The collector's families under the pedantic registry's checks: types,
// helps and label sets consistent, no series twice.
func TestCollectorIsConsistent(t *testing.T) {
	for _, scope := range []prom.Scope{prom.ProcessScope, prom.JobScope} {
		r := prometheus.NewPedanticRegistry()
		r.MustRegister(prom.NewCollector(stats(), scope))
		if _, err := r.Gather(); err != nil {
			t.Errorf("scope %d: %v", scope, err)
		}
	}
}

// Every figure of the hand-built stats appears under its name, type,
// labels and value, in seconds and bytes.
func TestMetricsOfOneProcess(t *testing.T) {
	code, body := scrape(t, prom.Handler(stats()), "/metrics")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	fams := families(t, strings.NewReader(body))
	src := lbl("job", "ysb", "process", "1", "operator", "src→filter", "instance", "1")
	cnt := lbl("job", "ysb", "process", "1", "operator", "count", "instance", "1")
	p1 := lbl("job", "ysb", "process", "1")
	peer0 := lbl("job", "ysb", "process", "1", "peer", "0")
	wm := float64(t0/1e6-4000) / 1e3
	for _, c := range []struct {
		name   string
		typ    dto.MetricType
		labels map[string]string
		want   float64
	}{
		{"weir_records_in_total", dto.MetricType_COUNTER, src, 2500},
		{"weir_records_out_total", dto.MetricType_COUNTER, src, 800},
		{"weir_bytes_out_total", dto.MetricType_COUNTER, src, 6400},
		{"weir_bytes_in_total", dto.MetricType_COUNTER, cnt, 3200},
		{"weir_useful_seconds_total", dto.MetricType_COUNTER, src, 1.5},
		{"weir_idle_seconds_total", dto.MetricType_COUNTER, src, 0.25},
		{"weir_backpressure_seconds_total", dto.MetricType_COUNTER, src, 2},
		{"weir_queue_depth", dto.MetricType_GAUGE, cnt, 3},
		{"weir_instance_epoch", dto.MetricType_GAUGE, cnt, 8},
		{"weir_instance_watermark_seconds", dto.MetricType_GAUGE, cnt, wm},
		{"weir_instance_watermark_lag_seconds", dto.MetricType_GAUGE, cnt, 4},
		{"weir_key_group_records_total", dto.MetricType_COUNTER, lbl("job", "ysb", "process", "1", "operator", "count", "instance", "1", "key_group", "64"), 5},
		{"weir_key_group_records_total", dto.MetricType_COUNTER, lbl("job", "ysb", "process", "1", "operator", "count", "instance", "1", "key_group", "66"), 11},
		{"weir_records_read_total", dto.MetricType_COUNTER, p1, 2500},
		{"weir_epoch", dto.MetricType_GAUGE, p1, 9},
		{"weir_watermark_lag_seconds", dto.MetricType_GAUGE, p1, 2.5},
		{"weir_epoch_latency_max_seconds", dto.MetricType_GAUGE, p1, 0.08},
		{"weir_summary_time_seconds", dto.MetricType_GAUGE, p1, float64(t0) / 1e9},
		{"weir_process_done", dto.MetricType_GAUGE, p1, 0},
		{"weir_peer_bytes_out_total", dto.MetricType_COUNTER, peer0, 6400},
		{"weir_peer_frames_out_total", dto.MetricType_COUNTER, peer0, 9},
		{"weir_peer_bytes_in_total", dto.MetricType_COUNTER, peer0, 3200},
		{"weir_peer_frames_in_total", dto.MetricType_COUNTER, peer0, 4},
		{"weir_peer_credit_wait_seconds_total", dto.MetricType_COUNTER, peer0, 0.125},
		{"weir_peer_frames_out_total", dto.MetricType_COUNTER, lbl("job", "ysb", "process", "1", "peer", "2"), 1},
		{"weir_checkpoint_last_id", dto.MetricType_GAUGE, p1, 4},
		{"weir_checkpoint_last_epoch", dto.MetricType_GAUGE, p1, 8},
		{"weir_checkpoint_last_duration_seconds", dto.MetricType_GAUGE, p1, 2},
		{"weir_checkpoint_last_alignment_seconds", dto.MetricType_GAUGE, p1, 0.02},
		{"weir_checkpoint_last_bytes", dto.MetricType_GAUGE, p1, 8192},
		{"weir_critical_participation_ratio", dto.MetricType_GAUGE, lbl("job", "ysb", "process", "1", "group", "operator", "name", "count"), 0.75},
		{"weir_autoscale_wanted_instances", dto.MetricType_GAUGE, p1, 12},
		{"weir_autoscale_processes_needed", dto.MetricType_GAUGE, p1, 3},
		{"weir_autoscale_processes_running", dto.MetricType_GAUGE, p1, 2},
		{"weir_autoscale_decisions_total", dto.MetricType_COUNTER, p1, 3},
		{"weir_autoscale_disagreements_total", dto.MetricType_COUNTER, p1, 1},
		{"weir_busy_ratio", dto.MetricType_GAUGE, lbl("job", "ysb", "process", "1", "group", "operator", "name", "count"), 0.5},
	} {
		if f := fams[c.name]; f == nil || f.GetType() != c.typ {
			t.Errorf("%s: family %v, want type %v", c.name, f, c.typ)
			continue
		}
		m := series(fams, c.name, c.labels)
		if m == nil {
			t.Errorf("%s%v: no such series", c.name, c.labels)
		} else if got := value(m); math.Abs(got-c.want) > 1e-9*max(1, math.Abs(c.want)) {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The source's instance has no watermark (event time comes after it),
	// and a key group is a label only of key-group counts.
	if m := series(fams, "weir_instance_watermark_seconds", src); m != nil {
		t.Errorf("an instance without a watermark exports one: %v", m)
	}
	checkLatency(t, fams, p1)
	// Only process 1's figures: process 0's are in scope=job alone.
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "process" && l.GetValue() != "1" {
					t.Errorf("%s has a series of process %s in process scope", name, l.GetValue())
				}
			}
		}
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Errorf("no Go runtime or process figures")
	}
}

func checkLatency(t *testing.T, fams map[string]*dto.MetricFamily, labels map[string]string) {
	t.Helper()
	m := series(fams, "weir_epoch_latency_seconds", labels)
	if m == nil || m.Summary == nil {
		t.Fatalf("no latency summary for %v", labels)
	}
	want := map[float64]float64{0.5: 0.02, 0.9: 0.03, 0.99: 0.05, 0.999: 0.07}
	got := map[float64]float64{}
	for _, q := range m.Summary.Quantile {
		got[q.GetQuantile()] = q.GetValue()
	}
	if !reflect.DeepEqual(got, want) || m.Summary.GetSampleCount() != 9 || m.Summary.GetSampleSum() != 0.25 {
		t.Errorf("latency summary: quantiles %v, count %d, sum %v; want %v, 9, 0.25", got, m.Summary.GetSampleCount(), m.Summary.GetSampleSum(), want)
	}
}

// scope=job adds the processes heard from, each under its own label, and
// leaves out the one not heard from; the JSON form is the stats.
func TestJobScopeAndJSON(t *testing.T) {
	h := prom.Handler(stats())
	code, body := scrape(t, h, "/metrics?scope=job")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	fams := families(t, strings.NewReader(body))
	for p, want := range map[string]float64{"0": 1000, "1": 2500} {
		m := series(fams, "weir_records_read_total", lbl("job", "ysb", "process", p))
		if m == nil || value(m) != want {
			t.Errorf("process %s: records read %v, want %v", p, m, want)
		}
	}
	if m := series(fams, "weir_records_read_total", lbl("job", "ysb", "process", "2")); m != nil {
		t.Errorf("process 2, not heard from, exports %v", m)
	}
	if m := series(fams, "weir_watermark_seconds", lbl("job", "ysb", "process", "0")); m != nil {
		t.Errorf("process 0 has no watermark but exports %v", m)
	}
	if m := series(fams, "weir_records_in_total", lbl("job", "ysb", "process", "0", "operator", "src", "instance", "0")); m == nil || value(m) != 1000 {
		t.Errorf("process 0's source instance: %v", m)
	}
	checkLatency(t, fams, lbl("job", "ysb", "process", "1"))

	code, body = scrape(t, h, "/metrics.json")
	var got weir.JobStats
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("/metrics.json: status %d, %v", code, err)
	}
	if want := weir.JobStats(stats()); !reflect.DeepEqual(got, want) {
		t.Errorf("/metrics.json round trip:\n got %+v\nwant %+v", got, want)
	}
	if code, body := scrape(t, h, "/metrics?scope=all"); code != 400 || !strings.Contains(body, `unknown scope "all"`) {
		t.Errorf("scope=all: status %d, %q", code, body)
	}
}

// Before the first epoch the latency quantiles are NaN, as a summary
// without observations has.
func TestLatencyBeforeFirstEpoch(t *testing.T) {
	st := fixed{Job: "j", Processes: []weir.ProcessStats{{Time: 1}}}
	_, body := scrape(t, prom.Handler(st), "/metrics")
	m := series(families(t, strings.NewReader(body)), "weir_epoch_latency_seconds", lbl("job", "j", "process", "0"))
	if m == nil || m.Summary.GetSampleCount() != 0 || len(m.Summary.Quantile) != 4 {
		t.Fatalf("latency summary %v", m)
	}
	for _, q := range m.Summary.Quantile {
		if !math.IsNaN(q.GetValue()) {
			t.Errorf("quantile %v = %v before any epoch", q.GetQuantile(), q.GetValue())
		}
	}
}
