package weir

import (
	"context"
	"log/slog"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

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
