package engine

import (
	"context"
	"errors"
	"log/slog"

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
	log := j.Cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg := transport.Config{
		Self: c.Self, Addrs: c.Peers, Settings: j.meshSettings(p), Secret: c.Secret,
		TLS: j.Cfg.MeshTLS, DialTimeout: j.Cfg.MeshTimeout, Logger: log,
	}
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

// startElastic sets up the slots of an elastic job: on a process that
// starts it, the first Members take part from the start and the others
// are absent; one that joins waits for process 0's bootstrap.
func (j *Job) startElastic(ctx context.Context, net transport.Network) error {
	c := j.Cfg.Cluster
	if !c.Elastic() {
		return nil
	}
	if _, ok := net.(transport.Elastic); !ok {
		return errors.New("weir: an elastic job needs an elastic mesh")
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
