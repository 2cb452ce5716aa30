package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/weirstream/weir"
)

// Rescaler is a Source that can rescale while it runs (a *weir.Job).
type Rescaler interface {
	Rescale(instances int, opts ...weir.RescaleOption) (*weir.Migration, error)
}

// Leaver is a job one of whose processes can be asked to leave it.
type Leaver interface {
	Leave(process int, opts ...weir.RescaleOption) (*weir.Migration, error)
}

// RescaleRequest is the body of POST /rescale. Instances, or Leave (a
// process of the job that leaves it), is required, not both; the others
// take the engine's defaults when left out: strategy batched, gap 1
// epoch, per_pair 1 key group.
type RescaleRequest struct {
	Instances *int   `json:"instances,omitempty"`
	Leave     *int   `json:"leave,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
	Gap       *int   `json:"gap,omitempty"`
	PerPair   *int   `json:"per_pair,omitempty"`
}

// RescaleAnswer is what POST /rescale answers: the migration announced
// (weir.Migration's figures).
type RescaleAnswer struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
	Steps int    `json:"steps"`
	Moves int    `json:"moves"`
	// Leave, when a process leaves, is the first epoch it takes no part
	// in.
	Leave uint64 `json:"leave,omitempty"`
	// Sources are the sources whose shares move at First; KeptSources
	// the others, each with why it keeps its shares.
	Sources     []string `json:"sources,omitempty"`
	KeptSources []string `json:"kept_sources,omitempty"`
}

// maxRescaleBody bounds the body of POST /rescale.
const maxRescaleBody = 4 << 10

// RescaleHandler serves POST /rescale for job: the body (JSON, with
// Content-Type application/json, which a page of another site cannot send
// without the browser asking first) is a RescaleRequest; the answer is a
// RescaleAnswer, 400 for a body that is not one or asks for nonsense, 415
// for another content type, 409 when the job refuses (it is not running,
// cannot rescale, or has fewer instances than asked for) and 501 for a
// job that cannot rescale at all. Other methods get 405 and change
// nothing.
func RescaleHandler(job Source) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rescale", func(w http.ResponseWriter, r *http.Request) { postRescale(w, r, job) })
	return mux
}

func postRescale(w http.ResponseWriter, r *http.Request, job Source) {
	rs, ok := job.(Rescaler)
	if !ok {
		http.Error(w, "this job cannot rescale", http.StatusNotImplemented)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, fmt.Sprintf("Content-Type %q: want application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return
	}
	req, opts, err := readRescale(http.MaxBytesReader(w, r.Body, maxRescaleBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var m *weir.Migration
	if req.Leave != nil {
		lv, ok := job.(Leaver)
		if !ok {
			http.Error(w, "no process of this job can leave it", http.StatusNotImplemented)
			return
		}
		m, err = lv.Leave(*req.Leave, opts...)
	} else {
		m, err = rs.Rescale(*req.Instances, opts...)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeJSON(w, RescaleAnswer{First: m.First, Last: m.Last, Steps: m.Steps, Moves: m.Moves, Leave: m.Leave, Sources: m.Sources, KeptSources: m.KeptSources})
}

// readRescale decodes and checks a RescaleRequest, and returns the
// options it asks for.
func readRescale(body io.Reader) (RescaleRequest, []weir.RescaleOption, error) {
	var req RescaleRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, nil, fmt.Errorf("rescale: the body is not a rescale request (%v); want JSON such as {\"instances\": 4, \"strategy\": \"batched\", \"gap\": 1, \"per_pair\": 1}", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, nil, errors.New("rescale: the body holds more than one JSON object")
	}
	var opts []weir.RescaleOption
	switch {
	case req.Instances == nil && req.Leave == nil:
		return req, nil, errors.New(`rescale: "instances" is required: the number of instances to spread the key groups over (or "leave": the process that leaves the job)`)
	case req.Instances != nil && req.Leave != nil:
		return req, nil, errors.New(`rescale: "instances" and "leave" together: ask for one at a time`)
	case req.Leave != nil && *req.Leave < 0:
		return req, nil, fmt.Errorf(`rescale: "leave" %d: a process index is at least 0`, *req.Leave)
	case req.Instances != nil && *req.Instances < 1:
		return req, nil, fmt.Errorf(`rescale: "instances" %d: must be at least 1`, *req.Instances)
	case req.Gap != nil && *req.Gap < 1:
		return req, nil, fmt.Errorf(`rescale: "gap" %d: must be at least 1 epoch`, *req.Gap)
	case req.PerPair != nil && *req.PerPair < 1:
		return req, nil, fmt.Errorf(`rescale: "per_pair" %d: must be at least 1 key group`, *req.PerPair)
	}
	if req.Strategy != "" {
		s, err := weir.ParseRescaleStrategy(req.Strategy)
		if err != nil {
			return req, nil, fmt.Errorf(`rescale: "strategy" %q: want batched, all-at-once or fluid`, req.Strategy)
		}
		opts = append(opts, weir.WithStrategy(s))
	}
	if req.Gap != nil {
		opts = append(opts, weir.StepGap(*req.Gap))
	}
	if req.PerPair != nil {
		opts = append(opts, weir.PerPair(*req.PerPair))
	}
	return req, opts, nil
}
