package report

import (
	"slices"
	"strconv"
	"strings"
)

// A Run is one command of a suite, as weir's arguments.
type Run struct {
	Suite Suite
	Args  []string
}

// Command is the run's command line, "weir ..." (weir: the binary built
// from the source the report comes with).
func (r Run) Command() string {
	parts := []string{"weir"}
	for _, a := range r.Args {
		parts = append(parts, quote(a))
	}
	return strings.Join(parts, " ")
}

// quote quotes a for a POSIX shell when it needs it.
func quote(a string) string {
	if a != "" && strings.IndexFunc(a, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,@%+", c))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// sizes are the event counts of a plan.
type sizes struct {
	nexmark, ysb, skew, fission, transport int
	runs                                   int // timed runs of the benches that take --runs
	fissionRounds                          int
	simEpochSize                           int
}

var (
	fullSizes  = sizes{nexmark: 1_000_000, ysb: 5_000_000, skew: 2_000_000, fission: 500_000, transport: 20_000_000, runs: 3, fissionRounds: 500, simEpochSize: 200_000}
	quickSizes = sizes{nexmark: 20_000, ysb: 200_000, skew: 100_000, fission: 20_000, transport: 200_000, runs: 1, fissionRounds: 50, simEpochSize: 20_000}
)

// Plan returns the runs of a report: Nexmark (every query, with the
// hand-written loop, at 1 and 2 workers, and 2 processes of 1 worker), YSB (1 and 2 workers, and 2
// processes of 1 worker), skew (every strategy at 2, 4 and 8 partitions
// on 2 cores, and the planners' simulation at 2 to 64 partitions),
// fission and transport. quick shrinks every count to a test's size.
func Plan(quick bool) []Run {
	z := fullSizes
	if quick {
		z = quickSizes
	}
	n := strconv.Itoa
	var runs []Run
	add := func(s Suite, args ...string) { runs = append(runs, Run{Suite: s, Args: args}) }
	nex := []string{"bench", "nexmark", "--query", "all", "--events", n(z.nexmark)}
	for _, w := range []string{"1", "2"} {
		add(Nexmark, slices.Concat(nex, []string{"--workers", w, "--baseline"})...)
	}
	add(Nexmark, slices.Concat([]string{"launch", "-n", "2", "--"}, nex, []string{"--workers", "1"})...)
	// Epochs of 10ms: a run of a fraction of a second has tens of them,
	// enough for latency percentiles.
	ysb := []string{"bench", "ysb", "--events", n(z.ysb), "--runs", n(z.runs), "--interval", "10ms"}
	for _, w := range []string{"1", "2"} {
		add(YSB, slices.Concat(ysb, []string{"--workers", w, "--baseline"})...)
	}
	add(YSB, slices.Concat([]string{"launch", "-n", "2", "--"}, ysb, []string{"--workers", "1"})...)
	for _, w := range []string{"2", "4", "8"} {
		add(Skew, "bench", "skew", "--partitioning", "all", "--events", n(z.skew), "--runs", n(z.runs), "--workers", w, "--procs", "2")
	}
	for _, p := range []string{"2", "4", "8", "16", "32", "64"} {
		add(Skew, "bench", "skew", "--simulate", "--partitions", p, "--epoch-size", n(z.simEpochSize))
	}
	add(Fission, "bench", "fission", "--workers", "2", "--records", n(z.fission), "--rounds", n(z.fissionRounds), "--runs", n(z.runs))
	add(Transport, "launch", "-n", "2", "--", "bench", "transport", "--records", n(z.transport), "--runs", n(z.runs))
	return runs
}
