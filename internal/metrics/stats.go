package metrics

import "time"

// InstanceStats is one operator instance's figures, cumulative since the
// job started. An instance is a task instance: a chain of fused
// operators, named by Operator (the names of its operators joined by
// "→"), running on one goroutine.
type InstanceStats struct {
	Operator string `json:"operator"`
	Instance int    `json:"instance"`
	Process  int    `json:"process"`
	// Source is set on a source instance, which has no input queue.
	Source bool `json:"source,omitempty"`
	// RecordsIn are the records the instance took in (read, for a
	// source); RecordsOut those it sent on to other tasks (a chain that
	// ends in sinks sends none: what sinks write is not counted). BytesIn and BytesOut count encoded bytes, which
	// exist only where records cross a process boundary.
	RecordsIn  int64 `json:"records_in"`
	RecordsOut int64 `json:"records_out"`
	BytesIn    int64 `json:"bytes_in"`
	BytesOut   int64 `json:"bytes_out"`
	// Useful, Idle and Backpressure split the instance's time (DS2).
	Useful       time.Duration `json:"useful_ns"`
	Idle         time.Duration `json:"idle_ns"`
	Backpressure time.Duration `json:"backpressure_ns"`
	// Lifetime is how long the instance has run (to its end, once ended):
	// the time Useful, Idle and Backpressure split, short of the gaps
	// between them.
	Lifetime time.Duration `json:"lifetime_ns"`
	// Running says whether the instance runs now: it has started and not
	// ended (an instance of a keyed operator takes part only while it
	// owns key groups, and may start again).
	Running bool `json:"running"`
	// Queue is the number of messages waiting in the instance's inbox.
	Queue int `json:"queue"`
	// Backlog, for a source instance whose reader says (KnowsBacklog), is
	// the records it could read now without waiting.
	Backlog      int64 `json:"backlog,omitempty"`
	KnowsBacklog bool  `json:"knows_backlog,omitempty"`
	// Epoch is the last epoch the instance completed; Watermark the
	// watermark it completed it with (progress.NoWatermark without event
	// time).
	Epoch     uint64 `json:"epoch"`
	Watermark int64  `json:"watermark"`
	// KeyGroups, for an instance of a keyed operator, counts the records
	// it received per key group, from key group KeyGroupLo on. They are
	// counted where the records are sent (ProcessStats.Loads) and filled
	// in by JobStats.AssignLoads: Job.Stats does.
	KeyGroupLo int     `json:"key_group_lo,omitempty"`
	KeyGroups  []int64 `json:"key_groups,omitempty"`
}

// PeerStats is what this process sent to and received from one peer.
type PeerStats struct {
	Peer       int           `json:"peer"`
	BytesOut   int64         `json:"bytes_out"`
	FramesOut  int64         `json:"frames_out"`
	BytesIn    int64         `json:"bytes_in"`
	FramesIn   int64         `json:"frames_in"`
	CreditWait time.Duration `json:"credit_wait_ns"`
}

// CheckpointStats is one checkpoint as this process took it.
type CheckpointStats struct {
	ID    uint64 `json:"id"`
	Epoch uint64 `json:"epoch"`
	// Start is when the process began its part (Unix nanoseconds);
	// Duration runs from there to its part written; Alignment is how long
	// the checkpoint epoch took to end at every instance of the process
	// after the first one ended it; Bytes is the size of the part's
	// state blobs and source positions.
	Start     int64         `json:"start"`
	Duration  time.Duration `json:"duration_ns"`
	Alignment time.Duration `json:"alignment_ns"`
	Bytes     int64         `json:"bytes"`
	Complete  bool          `json:"complete"`
}

// LatencyStats summarises the epoch latencies (source cut to the end of
// the epoch at the last terminal instance) of one process.
type LatencyStats struct {
	Count int64         `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
	Sum   time.Duration `json:"sum_ns"`
}

// ProcessStats is one process's summary: what it sends its peers.
type ProcessStats struct {
	Process int `json:"process"`
	// Time is when the summary was taken (Unix nanoseconds).
	Time int64 `json:"time"`
	// Epoch is the newest epoch completed at every terminal instance of
	// the process (in a process without one, at every instance),
	// Watermark its watermark.
	Epoch     uint64 `json:"epoch"`
	Watermark int64  `json:"watermark"`
	// WatermarkLag is Time minus Watermark (event time is in
	// milliseconds), 0 without a watermark.
	WatermarkLag time.Duration     `json:"watermark_lag_ns"`
	Records      int64             `json:"records"`
	Instances    []InstanceStats   `json:"instances"`
	Peers        []PeerStats       `json:"peers,omitempty"`
	Checkpoints  []CheckpointStats `json:"checkpoints,omitempty"`
	Latency      LatencyStats      `json:"latency"`
	// Loads count the records this process's senders sent to each key
	// group of each keyed operator (JobStats.Loads sums them over the
	// processes).
	Loads []KeyGroupLoad `json:"loads,omitempty"`
	// Final is set on the last summary of a process whose part has ended.
	Final bool `json:"final,omitempty"`
}

// KeyGroupLoad is the records sent to each key group of one keyed
// operator (a chain, named as InstanceStats.Operator), from key group 0.
type KeyGroupLoad struct {
	Operator string  `json:"operator"`
	Counts   []int64 `json:"counts"`
}

// JobStats is the whole job as one process sees it: its own summary and
// the newest its peers sent.
type JobStats struct {
	Job  string `json:"job"`
	Self int    `json:"self"`
	// Processes holds one summary per process, in process order; a
	// process not heard from yet has Time 0.
	Processes []ProcessStats `json:"processes"`
	// Critical is the newest critical-participation breakdown, when
	// tracing is on (see internal/trace).
	Critical []Participation `json:"critical,omitempty"`
	// Autoscale is the serving process's autoscaler's view, in a job
	// that sizes itself.
	Autoscale *AutoscaleStats `json:"autoscale,omitempty"`
}

// AutoscaleStats is what a job that sizes itself decided: its decisions
// so far, the rounds whose processes' digests differed, the instances
// its sizing last asked for beyond those the processes taking part run
// (0: none; more processes are needed when positive), and the processes
// its last sizing needed and took part in (more are needed when Need is
// above Running, fewer would do when below; 0 before a round is sized).
type AutoscaleStats struct {
	Decisions int `json:"decisions"`
	Differed  int `json:"differed"`
	Wanted    int `json:"wanted_instances"`
	Need      int `json:"processes_needed"`
	Running   int `json:"processes_running"`
}

// Participation is one row of a critical-participation summary: the share
// of all critical paths through a window of the trace that an activity
// type, operator, worker or worker pair takes (the shares of one Group sum
// to 1 in each window), next to its share of busy time.
type Participation struct {
	Group string  `json:"group"` // "type", "operator", "worker" or "pair"
	Name  string  `json:"name"`
	CP    float64 `json:"cp"`
	Busy  float64 `json:"busy"`
}
