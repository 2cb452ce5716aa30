package weir

import (
	"context"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/engine"
	"github.com/weirstream/weir/internal/migrate"
)

// RescaleStrategy is how a rescale spreads the key groups it moves over
// epoch boundaries (Megaphone's strategies).
type RescaleStrategy = migrate.Strategy

const (
	// Batched (the default) moves, at each step, at most one key group
	// out of and one into each instance, so that no instance stalls for
	// long on state in transit.
	Batched = migrate.Batched
	// AllAtOnce moves every key group at one boundary.
	AllAtOnce = migrate.AllAtOnce
	// Fluid moves one key group per step.
	Fluid = migrate.Fluid
)

// ParseRescaleStrategy reads "batched", "all-at-once" or "fluid".
func ParseRescaleStrategy(name string) (RescaleStrategy, error) { return migrate.ParseStrategy(name) }

// ActiveInstances makes the keyed operators start with their key groups
// over their first n instances only; the others own nothing until
// Job.Rescale gives them key groups. An operator's planned instances are
// the most a rescale can spread it over. The sources whose shares can
// move (in a job with time-based epochs, not ordered, whose source runs
// an instance on every process) likewise start reading on their first n
// instances, their input split into n shares; the others read nothing
// until a rescale gives them a share.
func ActiveInstances(n int) JobOption { return dataflow.ActiveInstances(n) }

// WithoutCheckpointReuse makes the rescales of a job with checkpoints hand
// every key group's state over whole. By default (Madsen and Zhou's
// checkpoint reuse) a key group whose blob the latest complete checkpoint
// holds leaves its old owner for a new owner in another process as a
// delta on that blob (the keys new or changed since, and those gone) when
// that is smaller, and the new owner reads the blob from the checkpoint
// directory, which the processes share. Within a process key groups are
// handed over in memory, whole: a delta would save no transfer there.
// Give it to every process of a job: each decides for the key groups it
// hands over. Job.WholeBytes and Job.MovedBytes compare the two.
func WithoutCheckpointReuse() JobOption { return dataflow.WithoutCheckpointReuse() }

// RescaleOption configures a rescale.
type RescaleOption func(*engine.Rescale)

// WithStrategy sets the rescale's strategy (default Batched).
func WithStrategy(s RescaleStrategy) RescaleOption { return func(r *engine.Rescale) { r.Strategy = s } }

// StepGap sets the epochs between two steps of a rescale (default 1), so
// that queues drain between them.
func StepGap(epochs int) RescaleOption {
	return func(r *engine.Rescale) { r.Gap = uint64(max(epochs, 0)) }
}

// PerPair lets one step of a batched rescale hand up to n key groups
// between the same two instances (default 1).
func PerPair(n int) RescaleOption { return func(r *engine.Rescale) { r.PerPair = n } }

// Migration is a rescale under way: its steps take force at the epoch
// boundaries First to Last.
type Migration struct {
	First, Last uint64
	Steps       int
	// Moves is the number of key groups that change owner.
	Moves int
	// Leave, for a process that leaves (Job.Leave), is the first epoch
	// it takes no part in; Join, for one that joins (Job.LastJoin), the
	// first it takes part in.
	Leave, Join uint64
	// Sources are the sources whose shares move to the instances the
	// key groups go to (Rescale) at First; KeptSources names the others with why they read on as
	// they did (a reader that cannot resume other readers' records, that
	// is not weir.Rescalable; count-based epochs, under which an instance
	// that reads nothing would end no epoch).
	Sources, KeptSources []string
	job                  *engine.Job
}

// Rescale spreads the key groups of the job's keyed operators over
// their first instances instances, while the job runs (the first of
// those whose process takes part in the job: one that has not joined an
// elastic job, or that leaves or has left, runs none; an operator of no
// more instances than asked spreads over all of its that take part, and
// one of more with fewer than asked taking part is refused): at each step's
// epoch boundary the old owners hand the moving key groups' state
// (windows, joins, process state and timers) to the new ones, which hold
// the records of those key groups until it has arrived; nothing else
// waits. At the first step's boundary the sources' input is split anew
// over the same instances: the instances that read until
// then hand over their readers' positions, and the new readers resume
// what they left (weir.Rescalable), so every record is still read once;
// the other instances read nothing and stay idle. Sources whose readers
// cannot resume others' records read on as they did
// (Migration.KeptSources). In a job of several processes, any process may be asked; it
// announces the rescale to the others, which apply it at the same
// epochs. Rescale returns once the rescale is announced; Migration.Wait
// waits for its last step.
func (j *Job) Rescale(instances int, opts ...RescaleOption) (*Migration, error) {
	r := engine.Rescale{Instances: instances}
	for _, o := range opts {
		o(&r)
	}
	m, err := j.e.Rescale(r)
	if err != nil {
		return nil, err
	}
	return &Migration{First: m.First, Last: m.Last, Steps: m.Steps, Moves: m.Moves, Sources: m.Sources, KeptSources: m.Kept, job: j.e}, nil
}

// Wait waits until this process has completed the epoch of the last step,
// the job ended or ctx is done; Completed then says whether the last step
// was reached (a job may reach the end of its input first). A process
// whose keyed operators feed no sink of its own has completed an epoch
// once every task instance it runs has: its handovers of the step are
// done then.
func (m *Migration) Wait(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for m.job.CompletedEpoch() < m.Last {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.job.Done():
			return nil
		case <-t.C:
		}
	}
	return nil
}

// AdmitJoins sets how this process of an elastic job (ElasticCluster)
// moves key groups onto a process that joins, when it is the one that
// admits joins (the process present longest: process 0 until it leaves,
// then the next): the strategy and the options of a rescale (default
// Batched). Call it before Run, on every process.
func (j *Job) AdmitJoins(opts ...RescaleOption) {
	var r engine.Rescale
	for _, o := range opts {
		o(&r)
	}
	j.e.AdmitWith(r)
}

// LastJoin returns, on the process of an elastic job that let it in
// (see AdmitJoins), the migration of the last process it let in (Migration.Join is the epoch it takes part
// from); false before any joined.
func (j *Job) LastJoin() (*Migration, bool) {
	m, ok := j.e.LastJoin()
	if !ok {
		return nil, false
	}
	return &Migration{First: m.First, Last: m.Last, Steps: m.Steps, Moves: m.Moves, Join: m.Join, Sources: m.Sources, job: j.e}, true
}

// Leave asks process p of a running distributed job to leave it: its key
// groups move to the instances of the processes that stay, in steps by
// the options' strategy, while the job runs; from the epoch after the
// last step every instance of p ends, and p's Run returns nil once they
// have (its process may exit 0). The other processes run on. Any process
// may be asked; it announces the leave to the others. A leaving process
// must have nothing left to read: its sources' shares must have moved or
// ended. A process that runs the only instances of an operator (process
// 0, which runs the single-instance ones, such as a sink without
// Parallelism) is refused; process 0 leaves a job whose every operator
// has an instance on another process, and the next process then leads
// the checkpoints (their stride, the empty parts of the processes gone,
// the directory's end mark).
func (j *Job) Leave(p int, opts ...RescaleOption) (*Migration, error) {
	var r engine.Rescale
	for _, o := range opts {
		o(&r)
	}
	m, err := j.e.Leave(p, r)
	if err != nil {
		return nil, err
	}
	return &Migration{First: m.First, Last: m.Last, Steps: m.Steps, Moves: m.Moves, Leave: m.Leave, Sources: m.Sources, job: j.e}, nil
}

// MovedBytes is the bytes of key-group state this process handed over
// since the job started (key groups sent as deltas on a checkpoint count
// the delta), and the key groups.
func (j *Job) MovedBytes() (bytes, keyGroups int64) {
	f := j.e.RescaleFigures()
	return f.Bytes, f.KeyGroups
}

// WholeBytes is the bytes the key-group state this process handed over
// would have taken had every key group gone whole: MovedBytes without
// checkpoint reuse.
func (j *Job) WholeBytes() int64 { return j.e.RescaleFigures().Whole }

// Completed reports whether this process has completed the epoch of the
// migration's last step.
func (m *Migration) Completed() bool { return m.job.CompletedEpoch() >= m.Last }
