package engine

import (
	"context"
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
	return transport.Dial(ctx, transport.Config{
		Self: c.Self, Addrs: c.Peers, Settings: j.meshSettings(p), Secret: c.Secret,
		TLS: j.Cfg.MeshTLS, DialTimeout: j.Cfg.MeshTimeout, Logger: log,
	})
}
