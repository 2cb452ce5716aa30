package prom

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry returns a new registry (not the global one) holding src's
// collector in the given scope and the Go runtime's and the process's
// collectors, for a program that serves or pushes its metrics its own
// way.
func Registry(src Source, scope Scope) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(NewCollector(src, scope), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves src's figures:
//
//   - /metrics: Prometheus's exposition formats (text, or what the
//     scraper negotiates), this process's figures; with ?scope=job every
//     process's.
//   - /metrics.json: src.Stats() as JSON (weir.JobStats' tags).
//
// It starts no goroutines; each request reads Stats once.
func Handler(src Source) http.Handler {
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	byScope := map[string]http.Handler{
		"":        promhttp.HandlerFor(Registry(src, ProcessScope), opts),
		"process": nil,
		"job":     promhttp.HandlerFor(Registry(src, JobScope), opts),
	}
	byScope["process"] = byScope[""]
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		scope := r.URL.Query().Get("scope")
		h, ok := byScope[scope]
		if !ok {
			http.Error(w, fmt.Sprintf("unknown scope %q: want process (the default) or job", scope), http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /metrics.json", func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(src.Stats())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
	return mux
}
