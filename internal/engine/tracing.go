package engine

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/runtime"
	"github.com/weirstream/weir/internal/trace"
	"github.com/weirstream/weir/internal/trace/critical"
)

// cpWindow is the length of the windows online CP analyses.
const cpWindow = time.Second

// tracing is the service that, while tracing is on, takes the tracer's
// events every quarter window, writes them to the trace file if the job
// has one, and analyses each window of cpWindow by critical
// participation once it is far enough behind now that its events have
// arrived (two windows and an epoch: recorders hand their events on at
// epoch ends). It keeps the newest window's summary for Stats, and
// switches tracing off when TraceFor's time is up.
type tracing struct {
	t        *trace.Tracer
	process  int
	procs    int
	lag      time.Duration
	file     *os.File
	w        *trace.Writer
	whole    bool          // tracing the whole run, into the file
	recent   []trace.Event // events of windows not analysed yet
	next     int64         // the start of the next window to analyse; 0: none yet
	mu       sync.Mutex
	until    time.Time // when TraceFor's time is up (zero: no TraceFor)
	ended    bool
	critical []metrics.Participation
}

// startTracing opens the trace file, if the job has one, and adds the
// tracing service to rt.
func (j *Job) startTracing(rt *runtime.Runtime) error {
	tr := &tracing{t: j.tracer, process: j.Process(), procs: max(1, j.Processes()), lag: 2*cpWindow + j.Cfg.Interval}
	if j.Cfg.TraceSet {
		f, err := os.Create(j.Cfg.TraceFile)
		if err != nil {
			return fmt.Errorf("weir: TraceFile: %w", err)
		}
		tr.file = f
		tr.w = trace.NewWriter(f, tr.process, tr.procs, time.Now().UnixNano())
		tr.whole = true
		j.tracer.SetOn(true)
	}
	j.mu.Lock()
	j.tracing = tr
	j.mu.Unlock()
	rt.AddService("tracing", tr.run)
	return nil
}

func (tr *tracing) run(done <-chan struct{}) error {
	tick := time.NewTicker(cpWindow / 4)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return tr.close()
		case now := <-tick.C:
			if err := tr.step(now); err != nil {
				tr.close()
				return err
			}
		}
	}
}

// step takes the events recorded since the last step, writes them and
// analyses the windows that are due.
func (tr *tracing) step(now time.Time) error {
	tr.mu.Lock()
	if !tr.until.IsZero() && now.After(tr.until) {
		tr.until = time.Time{}
		tr.t.SetOn(false)
	}
	tr.mu.Unlock()
	ev := tr.t.Take()
	if tr.w != nil {
		if err := tr.w.Write(tr.t.Workers(), tr.t.Ops(), ev); err != nil {
			return fmt.Errorf("weir: TraceFile: %w", err)
		}
	}
	tr.recent = append(tr.recent, ev...)
	if len(tr.recent) == 0 {
		tr.next = 0
		return nil
	}
	w := int64(cpWindow)
	if tr.next == 0 {
		lo := tr.recent[0].Start
		for _, e := range tr.recent {
			lo = min(lo, e.Start)
		}
		tr.next = lo - lo%w
	}
	for due := now.Add(-tr.lag).UnixNano(); tr.next+w <= due; tr.next += w {
		tr.analyse(tr.next, tr.next+w)
	}
	kept := tr.recent[:0]
	for _, e := range tr.recent {
		if e.End >= tr.next {
			kept = append(kept, e)
		}
	}
	tr.recent = kept
	return nil
}

// analyse computes the CP of [ts, te) from the recent events and keeps
// its summary (none if the window has no critical path).
func (tr *tracing) analyse(ts, te int64) {
	t := &trace.Trace{Process: tr.process, Processes: tr.procs, Workers: tr.t.Workers(), Ops: tr.t.Ops()}
	for _, e := range tr.recent {
		if e.Start < te && e.End >= ts {
			t.Events = append(t.Events, e)
		}
	}
	if len(t.Events) == 0 {
		return
	}
	s := critical.NewSummary(t)
	s.Add(critical.NewIndex(t).Window(ts, te))
	var rows []metrics.Participation
	if s.Windows > 0 {
		rows = s.Rows()
	}
	tr.mu.Lock()
	tr.critical = rows
	tr.mu.Unlock()
}

// close writes what is left to the trace file and closes it.
func (tr *tracing) close() error {
	tr.mu.Lock()
	tr.ended = true
	tr.mu.Unlock()
	tr.t.SetOn(false) // the run is over: Tracing says so
	if tr.w == nil {
		return nil
	}
	w, f := tr.w, tr.file
	tr.w, tr.file = nil, nil
	err := w.Write(tr.t.Workers(), tr.t.Ops(), tr.t.Take())
	err = errors.Join(err, w.Close(), f.Close())
	if err != nil {
		return fmt.Errorf("weir: TraceFile: %w", err)
	}
	return nil
}

// TraceFor switches tracing on for d (or until the run ends), while the
// job runs. With a trace file, tracing is on for the whole run already.
func (j *Job) TraceFor(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("weir: TraceFor(%v): must be positive", d)
	}
	j.mu.Lock()
	tr := j.tracing
	j.mu.Unlock()
	if tr == nil {
		return errors.New("weir: TraceFor: the job is not running")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.ended {
		return errors.New("weir: TraceFor: the job is not running")
	}
	if !tr.whole {
		tr.until = later(tr.until, time.Now().Add(d))
		tr.t.SetOn(true)
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Tracing reports whether the job records its activities now.
func (j *Job) Tracing() bool { return j.tracer.On() }

// critical returns the newest critical-participation summary of the
// running job's own workers (nil before one is made).
func (j *Job) critical() []metrics.Participation {
	j.mu.Lock()
	tr := j.tracing
	j.mu.Unlock()
	if tr == nil {
		return nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]metrics.Participation(nil), tr.critical...)
}
