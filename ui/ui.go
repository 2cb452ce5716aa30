package ui

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/weirstream/weir"
)

//go:embed static
var static embed.FS

// Source is what the dashboard reads: a *weir.Job.
type Source interface {
	Stats() weir.JobStats
	Topology() (weir.Topology, error)
}

// Tracer is a Source that can record activity traces for a while, which
// feeds the critical-participation panel. A Source that is not a Tracer
// gets 501 from /api/trace.
type Tracer interface {
	TraceFor(d time.Duration) error
	Tracing() bool
}

// MaxTrace bounds how long one request may switch tracing on.
const MaxTrace = 10 * time.Minute

// Handler serves the dashboard of job:
//
//	GET  /               the page (and /static/…, its script and style)
//	GET  /api/stats      job.Stats() as JSON (metrics.JobStats' tags)
//	GET  /api/topology   job.Topology() as JSON
//	GET  /api/trace      {"available": bool, "tracing": bool}
//	POST /api/trace?for=10s  tracing on for that long (501 if job cannot trace)
//	POST /rescale        job.Rescale as RescaleHandler says
func Handler(job Source) http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	files := http.FileServer(http.FS(sub))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /api/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, job.Stats())
	})
	mux.HandleFunc("GET /api/topology", func(w http.ResponseWriter, r *http.Request) {
		t, err := job.Topology()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, t)
	})
	mux.HandleFunc("GET /api/trace", func(w http.ResponseWriter, r *http.Request) {
		t, ok := job.(Tracer)
		writeJSON(w, traceState{Available: ok, Tracing: ok && t.Tracing()})
	})
	mux.HandleFunc("POST /api/trace", func(w http.ResponseWriter, r *http.Request) {
		postTrace(w, r, job)
	})
	mux.HandleFunc("POST /rescale", func(w http.ResponseWriter, r *http.Request) { postRescale(w, r, job) })
	return mux
}

type traceState struct {
	Available bool `json:"available"`
	Tracing   bool `json:"tracing"`
}

// postTrace switches tracing on for the duration in the query's "for".
func postTrace(w http.ResponseWriter, r *http.Request, job Source) {
	t, ok := job.(Tracer)
	if !ok {
		http.Error(w, "this job cannot record traces", http.StatusNotImplemented)
		return
	}
	d, err := time.ParseDuration(r.URL.Query().Get("for"))
	if err != nil || d <= 0 || d > MaxTrace {
		http.Error(w, fmt.Sprintf("for=%q: want a positive duration up to %s, such as 10s", r.URL.Query().Get("for"), MaxTrace), http.StatusBadRequest)
		return
	}
	if err := t.TraceFor(d); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(w, traceState{Available: true, Tracing: t.Tracing()})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}
