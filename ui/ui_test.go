package ui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/ui"
)

type fakeJob struct {
	stats weir.JobStats
	topo  weir.Topology
}

func (f *fakeJob) Stats() weir.JobStats             { return f.stats }
func (f *fakeJob) Topology() (weir.Topology, error) { return f.topo, nil }

type tracingJob struct {
	fakeJob
	traced []time.Duration
}

func (f *tracingJob) TraceFor(d time.Duration) error { f.traced = append(f.traced, d); return nil }
func (f *tracingJob) Tracing() bool                  { return len(f.traced) > 0 }

func newFake() *fakeJob {
	return &fakeJob{
		stats: weir.JobStats{Job: "j", Self: 1, Processes: []weir.ProcessStats{{Process: 0, Time: 5, Records: 7},
			{Process: 1, Time: 6, Records: 9, Instances: []weir.InstanceStats{{Operator: "w", Instance: 1, Process: 1, Useful: time.Second, KeyGroups: []int64{1, 2}}}}}},
		topo: weir.Topology{Job: "j", Processes: 2, Tasks: []weir.TopologyTask{{ID: 0, Name: "w", Parallelism: 2}}},
	}
}

func get(t *testing.T, h http.Handler, method, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// The API serves the source's figures and graph as they are, in their
// JSON form.
func TestAPI(t *testing.T) {
	f := newFake()
	h := ui.Handler(f)
	code, body := get(t, h, "GET", "/api/stats")
	var st weir.JobStats
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || !reflect.DeepEqual(st, f.stats) {
		t.Errorf("/api/stats: %d %v\n got %+v\nwant %+v", code, err, st, f.stats)
	}
	code, body = get(t, h, "GET", "/api/topology")
	var topo weir.Topology
	if err := json.Unmarshal([]byte(body), &topo); code != 200 || err != nil || !reflect.DeepEqual(topo, f.topo) {
		t.Errorf("/api/topology: %d %v\n got %+v\nwant %+v", code, err, topo, f.topo)
	}
	if code, body := get(t, h, "GET", "/api/trace"); code != 200 || strings.TrimSpace(body) != `{"available":false,"tracing":false}` {
		t.Errorf("/api/trace: %d %s", code, body)
	}
	if code, body := get(t, h, "POST", "/api/trace?for=10s"); code != http.StatusNotImplemented {
		t.Errorf("POST /api/trace on a job that cannot trace: %d %s, want 501", code, body)
	}
	if code, _ := get(t, h, "POST", "/api/stats"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/stats: %d, want 405", code)
	}
	if code, _ := get(t, h, "GET", "/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d, want 404", code)
	}
}

// The page and every file it loads are served from the embedded tree.
func TestPage(t *testing.T) {
	h := ui.Handler(newFake())
	code, page := get(t, h, "GET", "/")
	if code != 200 || !strings.Contains(page, `<svg id="graph"`) {
		t.Fatalf("/: %d\n%s", code, page)
	}
	for _, ref := range strings.Split(page, `"static/`)[1:] {
		path := "/static/" + ref[:strings.IndexByte(ref, '"')]
		if code, body := get(t, h, "GET", path); code != 200 || len(body) == 0 {
			t.Errorf("%s: %d, %d bytes", path, code, len(body))
		}
	}
}

// POST /api/trace switches a tracer on for the duration asked, and
// refuses durations that are not positive, too long or not durations.
func TestTrace(t *testing.T) {
	f := &tracingJob{fakeJob: *newFake()}
	h := ui.Handler(f)
	for _, bad := range []string{"", "for=ten", "for=0s", "for=-1s", "for=11m"} {
		if code, body := get(t, h, "POST", "/api/trace?"+bad); code != http.StatusBadRequest || !strings.Contains(body, "want a positive duration") {
			t.Errorf("POST /api/trace?%s: %d %s, want 400", bad, code, body)
		}
	}
	if len(f.traced) != 0 {
		t.Fatalf("refused requests traced %v", f.traced)
	}
	if code, body := get(t, h, "POST", "/api/trace?for=10s"); code != 200 || strings.TrimSpace(body) != `{"available":true,"tracing":true}` {
		t.Errorf("POST /api/trace?for=10s: %d %s", code, body)
	}
	if !reflect.DeepEqual(f.traced, []time.Duration{10 * time.Second}) {
		t.Errorf("traced %v, want [10s]", f.traced)
	}
}
