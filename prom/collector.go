package prom

import (
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/metrics"
)

// Source is what the collector reads: *weir.Job is one.
type Source interface {
	Stats() weir.JobStats
}

// Scope says which processes' figures a collector exports.
type Scope int

const (
	// ProcessScope exports the figures of the process that serves them
	// (JobStats.Self) only: what a Prometheus scraping every process
	// wants, each figure counted once.
	ProcessScope Scope = iota
	// JobScope exports every process's figures as the serving process
	// last heard them, each under its process label.
	JobScope
)

// Collector is a prometheus.Collector of a job's figures: each Collect
// reads Stats once.
type Collector struct {
	src   Source
	scope Scope
}

// NewCollector returns a collector of src's figures in the given scope.
func NewCollector(src Source, scope Scope) *Collector {
	return &Collector{src: src, scope: scope}
}

var (
	procLabels = []string{"job", "process"}
	instLabels = []string{"job", "process", "operator", "instance"}
	peerLabels = []string{"job", "process", "peer"}
	kgLabels   = []string{"job", "process", "operator", "instance", "key_group"}
	cpLabels   = []string{"job", "process", "group", "name"}
)

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("weir_"+name, help, labels, nil)
}

// figure is one metric of a kind of stats (T): its description, type and
// value; ok, when set, says whether the figure exists.
type figure[T any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(*T, *metrics.ProcessStats) float64
	ok    func(*T) bool
}

func counter[T any](name, help string, labels []string, v func(*T, *metrics.ProcessStats) float64) figure[T] {
	return figure[T]{desc: desc(name, help, labels), typ: prometheus.CounterValue, value: v}
}

func gauge[T any](name, help string, labels []string, v func(*T, *metrics.ProcessStats) float64) figure[T] {
	return figure[T]{desc: desc(name, help, labels), typ: prometheus.GaugeValue, value: v}
}

func (f figure[T]) when(ok func(*T) bool) figure[T] {
	f.ok = ok
	return f
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// hasWatermark reports whether wm is a watermark: a job without event
// time has none, and a source that ended has the largest.
func hasWatermark(wm int64) bool { return wm != math.MinInt64 && wm != math.MaxInt64 }

// watermarkSeconds is an event-time watermark (Unix milliseconds) in Unix
// seconds; lag is the summary's wall clock minus it.
func watermarkSeconds(wm int64) float64 { return float64(wm) / 1e3 }

func lag(wm int64, ps *metrics.ProcessStats) float64 {
	return float64(ps.Time)/1e9 - watermarkSeconds(wm)
}

type inst = metrics.InstanceStats

var instFigures = []figure[inst]{
	counter("records_in_total", "Records the operator instance took in (read, for a source).", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.RecordsIn) }),
	counter("records_out_total", "Records the operator instance sent on or wrote.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.RecordsOut) }),
	counter("bytes_in_total", "Encoded bytes the operator instance received from other processes.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.BytesIn) }),
	counter("bytes_out_total", "Encoded bytes the operator instance sent to other processes.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.BytesOut) }),
	counter("useful_seconds_total", "Time the operator instance spent processing and (de)serializing (DS2's useful time).", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return seconds(s.Useful) }),
	counter("idle_seconds_total", "Time the operator instance waited for input.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return seconds(s.Idle) }),
	counter("backpressure_seconds_total", "Time the operator instance waited for room downstream.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return seconds(s.Backpressure) }),
	gauge("queue_depth", "Messages waiting in the operator instance's inbox.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.Queue) }),
	gauge("instance_epoch", "Last epoch the operator instance completed.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return float64(s.Epoch) }),
	gauge("instance_watermark_seconds", "Event-time watermark (Unix seconds) the operator instance completed its last epoch with.", instLabels,
		func(s *inst, _ *metrics.ProcessStats) float64 { return watermarkSeconds(s.Watermark) }).
		when(func(s *inst) bool { return hasWatermark(s.Watermark) }),
	gauge("instance_watermark_lag_seconds", "Wall clock of the summary minus the operator instance's watermark.", instLabels,
		func(s *inst, ps *metrics.ProcessStats) float64 { return lag(s.Watermark, ps) }).
		when(func(s *inst) bool { return hasWatermark(s.Watermark) }),
}

type proc = metrics.ProcessStats

// The autoscaler's figures, of the serving process.
var (
	wantedDesc    = desc("autoscale_wanted_instances", "Instances of the keyed operators the autoscaler's sizing last asked for beyond those the job's processes run: more processes are needed when positive.", procLabels)
	needDesc      = desc("autoscale_processes_needed", "Processes the autoscaler's last sizing needs for the keyed operators' instances: more are needed when above weir_autoscale_processes_running, fewer would do when below (0 before a round is sized).", procLabels)
	runningDesc   = desc("autoscale_processes_running", "Processes that took part in the autoscaler's last sized round.", procLabels)
	decisionsDesc = desc("autoscale_decisions_total", "Decisions the autoscaler took (every process of the job counts the same ones).", procLabels)
	differedDesc  = desc("autoscale_disagreements_total", "Rounds whose processes sized them from figures that differed: none of them decided.", procLabels)
)

var procFigures = []figure[proc]{
	counter("records_read_total", "Records the process's sources read.", procLabels,
		func(p *proc, _ *proc) float64 { return float64(p.Records) }),
	gauge("epoch", "Newest epoch completed at every terminal operator instance of the process.", procLabels,
		func(p *proc, _ *proc) float64 { return float64(p.Epoch) }),
	gauge("watermark_seconds", "Event-time watermark (Unix seconds) of the process's newest completed epoch.", procLabels,
		func(p *proc, _ *proc) float64 { return watermarkSeconds(p.Watermark) }).
		when(func(p *proc) bool { return hasWatermark(p.Watermark) }),
	gauge("watermark_lag_seconds", "Wall clock of the summary minus the process's watermark.", procLabels,
		func(p *proc, _ *proc) float64 { return lag(p.Watermark, p) }).
		when(func(p *proc) bool { return hasWatermark(p.Watermark) }),
	gauge("epoch_latency_max_seconds", "Longest epoch latency of the process.", procLabels,
		func(p *proc, _ *proc) float64 { return seconds(p.Latency.Max) }),
	gauge("summary_time_seconds", "When the process's figures were taken (Unix seconds).", procLabels,
		func(p *proc, _ *proc) float64 { return float64(p.Time) / 1e9 }),
	gauge("process_done", "1 once the process's part of the job has ended.", procLabels,
		func(p *proc, _ *proc) float64 { return b2f(p.Final) }),
}

type peer = metrics.PeerStats

var peerFigures = []figure[peer]{
	counter("peer_bytes_out_total", "Bytes the process sent to the peer.", peerLabels,
		func(s *peer, _ *proc) float64 { return float64(s.BytesOut) }),
	counter("peer_frames_out_total", "Frames the process sent to the peer.", peerLabels,
		func(s *peer, _ *proc) float64 { return float64(s.FramesOut) }),
	counter("peer_bytes_in_total", "Bytes the process received from the peer.", peerLabels,
		func(s *peer, _ *proc) float64 { return float64(s.BytesIn) }),
	counter("peer_frames_in_total", "Frames the process received from the peer.", peerLabels,
		func(s *peer, _ *proc) float64 { return float64(s.FramesIn) }),
	counter("peer_credit_wait_seconds_total", "Time the process waited for the peer's credit to send.", peerLabels,
		func(s *peer, _ *proc) float64 { return seconds(s.CreditWait) }),
}

type ckpt = metrics.CheckpointStats

var ckptFigures = []figure[ckpt]{
	gauge("checkpoint_last_id", "Id of the process's newest complete checkpoint (ids count up by one per checkpoint).", procLabels,
		func(c *ckpt, _ *proc) float64 { return float64(c.ID) }),
	gauge("checkpoint_last_epoch", "Epoch of the process's newest complete checkpoint.", procLabels,
		func(c *ckpt, _ *proc) float64 { return float64(c.Epoch) }),
	gauge("checkpoint_last_duration_seconds", "Time the process took to write its part of its newest complete checkpoint.", procLabels,
		func(c *ckpt, _ *proc) float64 { return seconds(c.Duration) }),
	gauge("checkpoint_last_alignment_seconds", "Time the newest complete checkpoint's epoch took to end at every instance of the process after the first.", procLabels,
		func(c *ckpt, _ *proc) float64 { return seconds(c.Alignment) }),
	gauge("checkpoint_last_bytes", "Size of the process's part of its newest complete checkpoint.", procLabels,
		func(c *ckpt, _ *proc) float64 { return float64(c.Bytes) }),
}

var (
	latencyDesc  = desc("epoch_latency_seconds", "Epoch latency of the process: from the source cut to the epoch's end at the last terminal instance.", procLabels)
	keyGroupDesc = desc("key_group_records_total", "Records the keyed operator instance received per key group.", kgLabels)
	cpDesc       = desc("critical_participation_ratio", "Share of all critical paths through the newest trace window that the activity takes (sums to 1 per group).", cpLabels)
	busyDesc     = desc("busy_ratio", "Share of busy time that the activity takes in the newest trace window.", cpLabels)
)

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, instFigures)
	describe(ch, procFigures)
	describe(ch, peerFigures)
	describe(ch, ckptFigures)
	for _, d := range []*prometheus.Desc{latencyDesc, keyGroupDesc, cpDesc, busyDesc, wantedDesc, needDesc, runningDesc, decisionsDesc, differedDesc} {
		ch <- d
	}
}

func describe[T any](ch chan<- *prometheus.Desc, fs []figure[T]) {
	for _, f := range fs {
		ch <- f.desc
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	for i := range st.Processes {
		ps := &st.Processes[i]
		if c.scope == ProcessScope && i != st.Self || c.scope == JobScope && i != st.Self && ps.Time == 0 {
			continue
		}
		collectProcess(ch, st.Job, ps)
	}
	self := strconv.Itoa(st.Self)
	if a := st.Autoscale; a != nil {
		ch <- prometheus.MustNewConstMetric(wantedDesc, prometheus.GaugeValue, float64(a.Wanted), st.Job, self)
		ch <- prometheus.MustNewConstMetric(needDesc, prometheus.GaugeValue, float64(a.Need), st.Job, self)
		ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(a.Running), st.Job, self)
		ch <- prometheus.MustNewConstMetric(decisionsDesc, prometheus.CounterValue, float64(a.Decisions), st.Job, self)
		ch <- prometheus.MustNewConstMetric(differedDesc, prometheus.CounterValue, float64(a.Differed), st.Job, self)
	}
	for _, p := range st.Critical {
		ch <- prometheus.MustNewConstMetric(cpDesc, prometheus.GaugeValue, p.CP, st.Job, self, p.Group, p.Name)
		ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, p.Busy, st.Job, self, p.Group, p.Name)
	}
}

// collectProcess sends one process's figures.
func collectProcess(ch chan<- prometheus.Metric, job string, ps *metrics.ProcessStats) {
	p := strconv.Itoa(ps.Process)
	emit(ch, procFigures, ps, ps, job, p)
	ch <- latency(ps.Latency, job, p)
	for i := range ps.Instances {
		s := &ps.Instances[i]
		op, in := s.Operator, strconv.Itoa(s.Instance)
		emit(ch, instFigures, s, ps, job, p, op, in)
		for k, n := range s.KeyGroups {
			ch <- prometheus.MustNewConstMetric(keyGroupDesc, prometheus.CounterValue, float64(n), job, p, op, in, strconv.Itoa(s.KeyGroupLo+k))
		}
	}
	for i := range ps.Peers {
		emit(ch, peerFigures, &ps.Peers[i], ps, job, p, strconv.Itoa(ps.Peers[i].Peer))
	}
	if c := lastComplete(ps.Checkpoints); c != nil {
		emit(ch, ckptFigures, c, ps, job, p)
	}
}

func emit[T any](ch chan<- prometheus.Metric, fs []figure[T], s *T, ps *metrics.ProcessStats, labels ...string) {
	for _, f := range fs {
		if f.ok == nil || f.ok(s) {
			ch <- prometheus.MustNewConstMetric(f.desc, f.typ, f.value(s, ps), labels...)
		}
	}
}

// latency is the process's epoch latencies as a summary: its quantiles
// are NaN before the first epoch, as Prometheus's own summaries are.
func latency(l metrics.LatencyStats, labels ...string) prometheus.Metric {
	q := map[float64]float64{0.5: seconds(l.P50), 0.9: seconds(l.P90), 0.99: seconds(l.P99), 0.999: seconds(l.P999)}
	if l.Count == 0 {
		for k := range q {
			q[k] = math.NaN()
		}
	}
	return prometheus.MustNewConstSummary(latencyDesc, uint64(max(l.Count, 0)), seconds(l.Sum), q, labels...)
}

// lastComplete is the complete checkpoint with the largest id, or nil.
func lastComplete(cs []metrics.CheckpointStats) *metrics.CheckpointStats {
	var last *metrics.CheckpointStats
	for i := range cs {
		if cs[i].Complete && (last == nil || cs[i].ID > last.ID) {
			last = &cs[i]
		}
	}
	return last
}
