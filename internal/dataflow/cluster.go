package dataflow

import (
	"crypto/tls"
	"time"

	"github.com/weirstream/weir/internal/transport"
)

// clusterConfig places the job's process among its peers.
type clusterConfig struct {
	Self   int
	Peers  []string
	Secret string
	// Net, if set, is used instead of dialling peers (tests); an elastic
	// job's must be a transport.Elastic.
	Net transport.Network
	// Members, if positive, makes the job elastic: Peers are the slots
	// processes may take, the first Members start the job, and others
	// join it while it runs. Join, on a process that joins a running
	// job, lists addresses of the job's processes to ask.
	Members int
	Join    []string
	Joins   bool
}

// Elastic reports whether the job's processes may join it while it runs.
func (c *clusterConfig) Elastic() bool { return c != nil && c.Members > 0 }

// Joining reports whether this process joins a running job.
func (c *clusterConfig) Joining() bool { return c != nil && c.Joins }

// ElasticCluster makes a distributed job (Cluster) elastic: its peers
// are slots that processes may take, the processes of the first members
// slots start it, and the others may join it while it runs (JoinCluster)
// and leave it. The keyed operators and sources are planned for every
// slot; the instances of slots without a process own nothing until their
// process joins. Every process, joining ones too, gives the same members.
func ElasticCluster(members int) JobOption {
	return func(c *JobConfig) {
		if c.Cluster == nil {
			c.Cluster = &clusterConfig{}
		}
		c.Cluster.Members = max(members, -1)
		if members <= 0 {
			c.Cluster.Members = -1 // refused by Validate
		}
	}
}

// JoinCluster makes this process of an elastic job (ElasticCluster) join
// it while it runs, asking the first of addrs (host:port of processes of
// the job) that answers to let it in.
func JoinCluster(addrs ...string) JobOption {
	return func(c *JobConfig) {
		if c.Cluster == nil {
			c.Cluster = &clusterConfig{}
		}
		c.Cluster.Join, c.Cluster.Joins = append([]string(nil), addrs...), true
	}
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
	return func(c *JobConfig) {
		old := c.Cluster
		c.Cluster = &clusterConfig{Self: self, Peers: append([]string(nil), peers...), Secret: secret}
		if old != nil {
			c.Cluster.Members, c.Cluster.Join, c.Cluster.Joins = old.Members, old.Join, old.Joins
		}
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
	return func(c *JobConfig) { c.MeshTLS = cfg }
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
	return func(c *JobConfig) {
		if d > 0 {
			c.MeshTimeout = d
		}
	}
}
