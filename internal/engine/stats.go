package engine

import (
	"time"

	"github.com/weirstream/weir/internal/metrics"
)

// Stats returns the whole job as this process sees it.
//
// For now it holds this process's records read, epochs and latencies
// only; per-instance figures and the peers' summaries are to come.
func (j *Job) Stats() metrics.JobStats {
	m := j.Metrics()
	ps := metrics.ProcessStats{Process: j.Process(), Time: time.Now().UnixNano(), Records: m.Records,
		Epoch:   uint64(max(m.Epochs, 0)),
		Latency: metrics.LatencyStats{Count: m.Epochs, P50: m.LatencyP50, P99: m.LatencyP99, Max: m.LatencyMax}}
	st := metrics.JobStats{Job: j.Name, Self: j.Process(), Processes: make([]metrics.ProcessStats, j.Processes())}
	st.Processes[j.Process()] = ps
	st.Critical = j.critical()
	return st
}
