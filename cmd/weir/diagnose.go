package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir/internal/metrics"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/trace/critical"
)

// diagnoseFlags are the flags of `weir diagnose`.
type diagnoseFlags struct {
	records   int
	workers   int
	keys      int
	base      int
	slow      int
	hot       int
	skew      float64
	straggler int
	window    time.Duration
	top       int
	json      bool
	keep      string
}

func diagnoseCmd() *cobra.Command {
	var f diagnoseFlags
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Run a job with a slow operator, then with a straggler, and rank both by critical participation and by busy time",
		Long: `Runs a generated job twice with tracing on: gen → parse → enrich → score →
count, each stage keyed by a key of its own (a task with an exchange
before it), each spinning --base rounds of a hash per record.

In "slow-operator" enrich spins --slow rounds more. In "straggler" every
stage is cheap, but a --skew share of the records carries one user key,
chosen so that the key's group belongs to instance --straggler of score:
that worker receives far more than its share.

Each trace is cut into --window windows and analysed over all of them;
for the operators and the workers it prints the top --top by critical
participation (CP) next to the top by busy share in the trace and by
useful time in the job's figures, and says what CP and busy time each
rank first. --json prints one JSON object per scenario instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return f.run(cmd)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.records, "records", 3_000_000, "records each run generates")
	fs.IntVar(&f.workers, "workers", 2, "parallelism of every stage")
	fs.IntVar(&f.keys, "keys", 1000, "distinct keys of each key")
	fs.IntVar(&f.base, "base", 50, "hash rounds every stage spins per record")
	fs.IntVar(&f.slow, "slow", 500, "(slow-operator) hash rounds enrich spins per record beyond --base")
	fs.IntVar(&f.hot, "hot", 500, "(straggler) hash rounds score spins per record of the hot user key beyond --base")
	fs.Float64Var(&f.skew, "skew", 0.3, "(straggler) share of the records with the hot user key")
	fs.IntVar(&f.straggler, "straggler", 1, "(straggler) the instance of score the hot key is routed to")
	fs.DurationVar(&f.window, "window", 250*time.Millisecond, "length of the windows CP is computed over")
	fs.IntVar(&f.top, "top", 3, "rows of each ranking")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per scenario")
	fs.StringVar(&f.keep, "trace-dir", "", "keep the traces in `DIR` (slow-operator.trace, straggler.trace) for weir trace analyze")
	return cmd
}

func (f *diagnoseFlags) check() error {
	switch {
	case f.records <= 0:
		return fmt.Errorf("--records %d: must be positive", f.records)
	case f.workers < 2 || f.workers > partition.DefaultKeyGroups:
		return fmt.Errorf("--workers %d: must be from 2 (one worker cannot straggle) to %d", f.workers, partition.DefaultKeyGroups)
	case f.keys < f.workers:
		return fmt.Errorf("--keys %d: must be at least --workers (%d)", f.keys, f.workers)
	case f.base < 0 || f.slow <= 0 || f.hot < 0:
		return fmt.Errorf("--base %d, --slow %d, --hot %d: --slow must be positive, the others not negative", f.base, f.slow, f.hot)
	case !(f.skew > 0 && f.skew < 1):
		return fmt.Errorf("--skew %v: must be between 0 and 1", f.skew)
	case f.straggler < 0 || f.straggler >= f.workers:
		return fmt.Errorf("--straggler %d: must be an instance of score, from 0 to %d", f.straggler, f.workers-1)
	case f.window <= 0:
		return fmt.Errorf("--window %v: must be positive", f.window)
	case f.top <= 0:
		return fmt.Errorf("--top %d: must be positive", f.top)
	}
	return nil
}

// diagScenario is one injected fault: what was made slow, and in which
// summary group CP should name it.
type diagScenario struct {
	name, group, injected, what string
	job                         diagJob
}

func (f *diagnoseFlags) scenarios(dir string) ([]diagScenario, error) {
	hot, err := hotKey(f.straggler, f.workers, uint64(f.keys))
	if err != nil {
		return nil, err
	}
	uniform := diagGen{N: f.records, Keys: uint64(f.keys)}
	skewed := uniform
	skewed.Hot, skewed.Skew = hot, f.skew
	worker := fmt.Sprintf("score#%d", f.straggler)
	return []diagScenario{{
		name: "slow-operator", group: "operator", injected: "enrich",
		what: fmt.Sprintf("enrich spins %d hash rounds per record, every other stage %d", f.base+f.slow, f.base),
		job:  diagJob{gen: uniform, workers: f.workers, base: f.base, slow: f.slow, trace: filepath.Join(dir, "slow-operator.trace")},
	}, {
		name: "straggler", group: "worker", injected: worker,
		what: fmt.Sprintf("%.0f%% of the records carry user key %d, whose key group %d belongs to %s; every stage spins %d rounds per record, score %d more for that key",
			100*f.skew, hot, keyGroupOf(hot), worker, f.base, f.hot),
		job: diagJob{gen: skewed, workers: f.workers, base: f.base, hot: f.hot, trace: filepath.Join(dir, "straggler.trace")},
	}}, nil
}

func (f *diagnoseFlags) run(cmd *cobra.Command) error {
	dir := f.keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "weir-diagnose")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	scs, err := f.scenarios(dir)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	for i, sc := range scs {
		res, err := f.diagnose(cmd, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		if f.json {
			if err := json.NewEncoder(out).Encode(res); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		res.print(out)
	}
	return nil
}

// diagRank is one row of a ranking: a name and its share.
type diagRank struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
}

// diagRanking ranks one group three ways.
type diagRanking struct {
	CP     []diagRank `json:"cp"`
	Busy   []diagRank `json:"busy"`   // busy share in the trace
	Useful []diagRank `json:"useful"` // useful time in the job's figures
}

// diagResult is one scenario's outcome (the --json object).
type diagResult struct {
	Scenario  string  `json:"scenario"`
	Injected  string  `json:"injected"`
	Group     string  `json:"group"`
	What      string  `json:"what"`
	Records   int64   `json:"records"`
	Generated int     `json:"generated"`
	Seconds   float64 `json:"seconds"`
	Events    int     `json:"events"`
	Windows   int     `json:"windows"`
	Empty     int     `json:"empty_windows"`
	// Dropped counts the message edges received before they were sent.
	Dropped int `json:"dropped"`
	// Transfer is the message edges' share of the critical paths, which
	// the rankings leave out.
	Transfer  float64                `json:"transfer"`
	CPFirst   string                 `json:"cp_first"`
	BusyFirst string                 `json:"busy_first"`
	Useful    string                 `json:"useful_first"`
	Rankings  map[string]diagRanking `json:"rankings"`
	// RecordsIn counts the records each instance took in (the job's
	// figures), by worker name.
	RecordsIn map[string]int64 `json:"records_in"`
}

func (f *diagnoseFlags) diagnose(cmd *cobra.Command, sc diagScenario) (*diagResult, error) {
	o, err := sc.job.run(cmd.Context())
	if err != nil {
		return nil, err
	}
	t, err := readTraces([]string{sc.job.trace}, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	x := critical.NewIndex(t)
	s := critical.NewSummary(t)
	for _, w := range x.Windows(int64(f.window)) {
		s.Add(w)
	}
	res := &diagResult{Scenario: sc.name, Injected: sc.injected, Group: sc.group, What: sc.what,
		Records: o.records, Generated: f.records, Seconds: o.took.Seconds(), Events: len(t.Events),
		Windows: s.Windows, Empty: s.Empty, Dropped: x.Dropped + s.Dropped, Rankings: map[string]diagRanking{}, RecordsIn: map[string]int64{}}
	rows := s.Rows()
	insts := o.stats.Instances()
	for _, in := range insts {
		res.RecordsIn[fmt.Sprintf("%s#%d", in.Operator, in.Instance)] = in.RecordsIn
	}
	for _, g := range []string{"operator", "worker"} {
		res.Rankings[g] = diagRanking{
			CP:     rank(rows, g, func(p metrics.Participation) float64 { return p.CP }),
			Busy:   rank(rows, g, func(p metrics.Participation) float64 { return p.Busy }),
			Useful: usefulRank(insts, g),
		}
	}
	for _, r := range rows {
		if r.Group == "operator" && r.Name == critical.Messages {
			res.Transfer = r.CP
		}
	}
	r := res.Rankings[sc.group]
	res.CPFirst, res.BusyFirst, res.Useful = first(r.CP), first(r.Busy), first(r.Useful)
	for g, r := range res.Rankings {
		r.CP, r.Busy, r.Useful = r.CP[:min(f.top, len(r.CP))], r.Busy[:min(f.top, len(r.Busy))], r.Useful[:min(f.top, len(r.Useful))]
		res.Rankings[g] = r
	}
	return res, nil
}

// rank orders the rows of group g by share, highest first, leaving out
// the message edges.
func rank(rows []metrics.Participation, g string, share func(metrics.Participation) float64) []diagRank {
	var out []diagRank
	for _, r := range rows {
		if r.Group == g && r.Name != critical.Messages {
			out = append(out, diagRank{r.Name, share(r)})
		}
	}
	sortRanks(out)
	return out
}

// usefulRank ranks operators or workers by their share of the job's
// useful time.
func usefulRank(insts []metrics.InstanceStats, g string) []diagRank {
	by := map[string]time.Duration{}
	var total time.Duration
	for _, in := range insts {
		name := in.Operator
		if g == "worker" {
			name = fmt.Sprintf("%s#%d", in.Operator, in.Instance)
		}
		by[name] += in.Useful
		total += in.Useful
	}
	var out []diagRank
	for name, d := range by {
		share := 0.0
		if total > 0 {
			share = d.Seconds() / total.Seconds()
		}
		out = append(out, diagRank{name, share})
	}
	sortRanks(out)
	return out
}

func sortRanks(rs []diagRank) {
	slices.SortFunc(rs, func(a, b diagRank) int { return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.Name, b.Name)) })
}

func first(rs []diagRank) string {
	if len(rs) == 0 {
		return "nothing"
	}
	return rs[0].Name
}

func (r *diagResult) print(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: %s\n", r.Scenario, r.What)
	fmt.Fprintf(w, "  %d of %d records in %.2fs; %d trace events, %d windows with a critical path, %d without; %d message edges dropped; transfer %.1f%% of CP\n",
		r.Records, r.Generated, r.Seconds, r.Events, r.Windows, r.Empty, r.Dropped, 100*r.Transfer)
	for _, g := range []string{"operator", "worker"} {
		k := r.Rankings[g]
		fmt.Fprintf(w, "  by %s\n", g)
		cols := [][]diagRank{k.CP, k.Busy, k.Useful}
		width := 8
		for _, c := range cols {
			for _, x := range c {
				width = max(width, len(x.Name))
			}
		}
		fmt.Fprintf(w, "    %-*s  %-*s  %s\n", width+7, "CP", width+7, "busy (trace)", "useful (stats)")
		for i := range len(k.CP) {
			var line strings.Builder
			for _, c := range cols {
				if i < len(c) {
					fmt.Fprintf(&line, "  %-*s %5.1f%%", width, c[i].Name, 100*c[i].Share)
				} else {
					fmt.Fprintf(&line, "  %-*s", width+7, "")
				}
			}
			fmt.Fprintf(w, "  %s\n", strings.TrimRight(line.String(), " "))
		}
	}
	fmt.Fprintf(w, "  injected: %s %s. CP ranks %s first; busy time ranks %s first (useful time: %s)\n",
		r.Group, r.Injected, r.CPFirst, r.BusyFirst, r.Useful)
}
