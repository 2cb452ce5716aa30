package weir

import (
	"context"
	"crypto/tls"
	"log/slog"
	"time"

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
// Each process listens at its own address in peers, on the addresses of
// its machine that the host resolves to (not on every interface).
// secret must be the same on every process (it is never sent). A
// connection that does not prove the secret is logged and dropped while
// the processes wait for each other (MeshTimeout); a peer that proves it
// but runs a different binary, plan or options fails the job on both
// sides with an error that names the first difference. Partitioning
// strategies pkg and prompt run in one process only.
func Cluster(self int, peers []string, secret string) JobOption {
	return func(c *jobConfig) {
		c.cluster = &clusterConfig{self: self, peers: append([]string(nil), peers...), secret: secret}
	}
}

// ClusterTLS makes the connections of a distributed job mutual TLS 1.3:
// cfg.Certificates[0] is this process's certificate, presented to the
// peers it dials and to those that dial it, and cfg.RootCAs the CA pool
// that every peer's certificate must chain to (a certificate of the
// job's CA admits a process; host names are not checked). A peer without
// such a certificate is dropped like one without the secret, which is
// still proven inside TLS. Weir sets the TLS version and client
// authentication itself. LoadClusterTLS reads cfg from PEM files.
func ClusterTLS(cfg *tls.Config) JobOption {
	return func(c *jobConfig) { c.meshTLS = cfg }
}

// LoadClusterTLS reads the configuration of ClusterTLS from PEM files:
// this process's certificate and key, and the CA certificates. An
// unreadable or invalid file, a key that is not the certificate's, and a
// certificate that is not valid now or not of the CA are refused with an
// error that names the file.
func LoadClusterTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	return transport.LoadTLS(certFile, keyFile, caFile)
}

// MeshTimeout sets how long the processes of a distributed job wait for
// each other to connect (default 30 s); a non-positive d keeps the
// default.
func MeshTimeout(d time.Duration) JobOption {
	return func(c *jobConfig) {
		if d > 0 {
			c.meshTimeout = d
		}
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
	return transport.Dial(ctx, transport.Config{
		Self: c.self, Addrs: c.peers, Settings: j.meshSettings(p), Secret: c.secret,
		TLS: j.cfg.meshTLS, DialTimeout: j.cfg.meshTimeout, Logger: log,
	})
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
