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
	// Net, if set, is used instead of dialling peers (tests).
	Net transport.Network
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
		c.Cluster = &clusterConfig{Self: self, Peers: append([]string(nil), peers...), Secret: secret}
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
