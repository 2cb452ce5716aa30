package dataflow

import "github.com/weirstream/weir/internal/transport"

// WithNetwork makes the job one process of a distributed job over n,
// instead of dialling peers (tests run several processes in one).
func WithNetwork(n transport.Network) JobOption {
	return func(c *JobConfig) {
		old := c.Cluster
		c.Cluster = &clusterConfig{Self: n.Self(), Net: n}
		if old != nil {
			c.Cluster.Members, c.Cluster.Join, c.Cluster.Joins = old.Members, old.Join, old.Joins
		}
	}
}
