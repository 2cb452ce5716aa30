package weir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/weirstream/weir/internal/codec"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// clusterConfig places the job's process among its peers.
type clusterConfig struct {
	self   int
	peers  []string
	secret string
	// net, if set, is used instead of dialling peers (tests).
	net transport.Network
}

// Cluster makes the job process self of a distributed job whose processes
// listen at peers (host:port, by process index). Every process runs the
// same program with the same options; each runs Workers instances of
// every parallel operator, so a region's parallelism is Workers times the
// number of processes, and one-instance operators (sinks, say) run on
// process 0. Processes connect to each other directly; none is special.
// secret must be the same on every process (it is never sent); a peer
// that runs a different plan or binary, or knows another secret, is
// refused. Partitioning strategies pkg and prompt run in one process only.
func Cluster(self int, peers []string, secret string) JobOption {
	return func(c *jobConfig) {
		c.cluster = &clusterConfig{self: self, peers: append([]string(nil), peers...), secret: secret}
	}
}

// processes is the number of processes the job runs in.
func (j *Job) processes() int {
	if c := j.cfg.cluster; c != nil {
		if c.net != nil {
			return c.net.Processes()
		}
		return max(1, len(c.peers))
	}
	return 1
}

// Process returns this process's index in a distributed job (0 in a
// single process): process 0 runs the one-instance operators, such as the
// sinks that write output files.
func (j *Job) Process() int {
	if c := j.cfg.cluster; c != nil {
		return c.self
	}
	return 0
}

// network connects the job's processes, or returns nil for one process.
func (j *Job) network(ctx context.Context, p *plan.Physical) (transport.Network, error) {
	c := j.cfg.cluster
	if c == nil || j.processes() == 1 {
		return nil, nil
	}
	if c.net != nil {
		return c.net, nil
	}
	log := j.cfg.logger
	if log == nil {
		log = slog.Default()
	}
	// Listen on the port on every interface: a host's own name may not
	// resolve to the address peers reach it at (127.0.1.1 on some
	// systems, a pod whose DNS name is not registered yet).
	_, port, err := net.SplitHostPort(c.peers[c.self])
	if err != nil {
		return nil, fmt.Errorf("weir: process %d's address %q: %w", c.self, c.peers[c.self], err)
	}
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		return nil, fmt.Errorf("weir: process %d: %w", c.self, err)
	}
	return transport.Dial(ctx, transport.Config{
		Self: c.self, Addrs: c.peers, Fingerprint: j.fingerprint(p), Secret: c.secret, Logger: log, Listener: l,
	})
}

// fingerprint names a plan, the options that decide routing and epochs,
// and the binary that runs it: processes of one job must agree on all.
func (j *Job) fingerprint(p *plan.Physical) string {
	h := sha256.New()
	h.Write([]byte(p.Explain()))
	c := j.cfg
	fmt.Fprintf(h, "workers=%d keygroups=%d interval=%v records=%d ordered=%v batch=%d partitioning=%q",
		c.workers, c.keyGroups, c.interval, c.epochRecords, c.ordered, c.batchSize, c.partitioning)
	if j.coord != nil {
		// Processes that restored different checkpoints must not run
		// together.
		fmt.Fprintf(h, " checkpoint=%d every=%d", j.coord.from, j.coord.every)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		h.Write([]byte(bi.GoVersion + " " + bi.Path + " " + bi.Main.Version))
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				h.Write([]byte(s.Key + "=" + s.Value))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// stableHash reports whether keys must hash alike in every process and
// every run: in a job of several processes, or one whose state outlives a
// run in checkpoints.
func (j *Job) stableHash() bool { return j.processes() > 1 || j.cfg.ckpt != nil }

// keyHasher hashes keys for routing by key group and for state tables. In
// a job of several processes every process must hash a key alike: keys
// that partition.Hasher hashes deterministically (strings, integers,
// bools) keep that hash; others (structs, arrays, floats) are hashed by
// their codec encoding, which is the same everywhere. (Floats +0 and -0
// are equal keys with different encodings: avoid them as distributed
// keys.) The returned function keeps scratch space: one goroutine uses it.
func keyHasher[K comparable](dist bool) func(K) uint64 {
	h, deterministic := partition.Hasher[K]()
	if deterministic || !dist {
		return h
	}
	c, err := codec.For[K]()
	if err != nil {
		return h // the key cannot cross processes; the edge's codec reports it
	}
	var one [1]K
	var buf []byte
	return func(k K) uint64 {
		one[0] = k
		buf = c.Append(buf[:0], one[:])
		return partition.HashBytes(buf)
	}
}
