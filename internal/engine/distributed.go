package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// network connects the job's processes, or returns nil for one process.
func (j *Job) network(ctx context.Context, p *plan.Physical) (transport.Network, error) {
	c := j.Cfg.Cluster
	if c == nil || j.Processes() == 1 {
		return nil, nil
	}
	if c.Net != nil {
		// A network given by hand forms like a mesh: every process has
		// opened its checkpoints before any runs, and one that can
		// compare the processes' settings (the in-process network)
		// refuses processes of another job, as Dial's handshake does.
		switch jn := c.Net.(type) {
		case interface {
			JoinWith(context.Context, []transport.Setting) error
		}:
			if err := jn.JoinWith(ctx, j.meshSettings(p)); err != nil {
				return nil, err
			}
		case interface{ Join(context.Context) error }:
			if err := jn.Join(ctx); err != nil {
				return nil, err
			}
		}
		return c.Net, nil
	}
	cfg := j.meshConfig(p)
	if c.Elastic() {
		cfg.Elastic, cfg.Join = true, c.Join
		if !c.Joining() {
			for q := range c.Members {
				cfg.Members = append(cfg.Members, q)
			}
		}
	}
	return transport.Dial(ctx, cfg)
}

// meshConfig is the transport's configuration of this process.
func (j *Job) meshConfig(p *plan.Physical) transport.Config {
	c := j.Cfg.Cluster
	return transport.Config{
		Self: c.Self, Addrs: c.Peers, Settings: j.meshSettings(p), Secret: c.Secret,
		TLS: j.Cfg.MeshTLS, DialTimeout: j.Cfg.MeshTimeout, Logger: j.Logger(),
	}
}

// probeTimeout bounds the probe of each other process by a process of a
// member's slot.
const probeTimeout = 5 * time.Second

// joinIfRunning makes a process of a member's slot, started without
// JoinCluster, join the job if it runs already: its slot's process left,
// and this one takes the slot again (a pod of a StatefulSet scaled down
// below the members, then up). It asks the other processes in turn,
// process 0 first (transport.Probe), until one answers (process 0 may
// have left too); if the job is starting, or none answers, the process
// starts the job with the other members. Slot 0 cannot be taken again: a
// process 0 that finds the job running without it fails before it opens
// the checkpoints, which the running job writes.
func (j *Job) joinIfRunning(ctx context.Context, p *plan.Physical) error {
	c := j.Cfg.Cluster
	if c == nil || !c.Elastic() || c.Joining() || c.Net != nil || c.Self >= c.Members {
		return nil
	}
	for q, addr := range c.Peers {
		if q == c.Self {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		running, err := transport.Probe(pctx, j.meshConfig(p), addr)
		cancel()
		switch {
		case err != nil:
			j.Logger().Info("weir: a process did not answer whether the job runs", "process", c.Self, "asked", q, "err", err)
			continue
		case running && c.Self == 0:
			return fmt.Errorf("weir: the elastic job runs already without process 0 (process %d says so): process 0 left it, and its slot cannot be taken again; start this process in a free slot with --join", q)
		case running:
			j.Logger().Info("weir: the job runs already: this process joins it, taking its slot again", "process", c.Self, "through", q)
			c.Joins, c.Join = true, []string{addr}
		}
		return nil
	}
	j.Logger().Info("weir: no process answered whether the job runs; starting it with the members", "process", c.Self)
	return nil
}

// startElastic sets up the slots of an elastic job: on a process that
// starts it, the first Members take part from the start and the others
// are absent; one that joins waits for the admitter's bootstrap.
func (j *Job) startElastic(ctx context.Context, net transport.Network) error {
	c := j.Cfg.Cluster
	if !c.Elastic() {
		return nil
	}
	if _, ok := net.(transport.Elastic); !ok {
		return errors.New("weir: an elastic job needs an elastic mesh")
	}
	if j.microBatched() {
		// Every process takes part in every round of the micro-batch
		// strategies, from the job's start to its end.
		return fmt.Errorf("weir: partitioning %s does not run in an elastic job (processes that join and leave); use hash, roundrobin or auto", j.Cfg.Partitioning)
	}
	if c.Joining() {
		if err := j.awaitBootstrap(ctx, net); err != nil {
			return err
		}
	} else {
		j.slots = newPresence(net.Processes(), func(q int) uint64 {
			if q < c.Members {
				return 0
			}
			return notYet
		})
	}
	if j.coord != nil {
		for _, q := range j.slots.absent() {
			j.coord.joins(q, notYet)
		}
		if j.boot != nil {
			j.coord.first = j.boot.at
		}
	}
	return nil
}
