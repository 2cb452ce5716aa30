package transport

import (
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Defaults of Config's zero fields.
const (
	DefaultCredits     = 16
	DefaultHeartbeat   = 500 * time.Millisecond
	DefaultTimeout     = 5 * time.Second
	DefaultDialTimeout = 30 * time.Second
)

// Limits of Config.
const (
	MaxProcesses   = 1 << 16 // process indexes travel as uint16
	MaxCredits     = 1 << 16
	maxFingerprint = 1024
)

// Config describes one process of the mesh. All processes of a job pass
// the same Addrs, Fingerprint, Secret and Credits; only Self differs.
type Config struct {
	// Self is this process's index in Addrs.
	Self int
	// Addrs holds the host:port of every process, by index; Addrs[Self]
	// is where this process listens.
	Addrs []string
	// Fingerprint identifies the job (a hash of the plan and the binary
	// version); peers must have exactly the same. At most 1024 bytes.
	Fingerprint string
	// Secret is shared by all processes; each proves it knows it without
	// sending it. It may be empty: then peers must have it empty too.
	Secret string
	// Credits is the number of frames a receiver grants per channel and
	// direction, so the number of frames queued per channel at most.
	// Default DefaultCredits.
	Credits int
	// Heartbeat is the interval at which an idle connection is told that
	// its peer is alive. Default DefaultHeartbeat.
	Heartbeat time.Duration
	// Timeout is how long a peer may stay silent before it is lost; it
	// also bounds each handshake, each write and the wait of Close.
	// Default DefaultTimeout; it must exceed Heartbeat.
	Timeout time.Duration
	// DialTimeout is how long Dial keeps trying to reach its peers.
	// Default DefaultDialTimeout.
	DialTimeout time.Duration
	// Logger receives refusals, failures and connections. Default
	// slog.Default().
	Logger *slog.Logger
	// Listener is an already open listener for Addrs[Self] (tests listen
	// on port 0). Dial takes it over and closes it when the mesh is
	// complete or failed. Nil: Dial listens on Addrs[Self].
	Listener net.Listener
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Credits == 0 {
		c.Credits = DefaultCredits
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case len(c.Addrs) == 0 || len(c.Addrs) > MaxProcesses:
		return c, fmt.Errorf("transport: config: %d addresses; want 1 to %d", len(c.Addrs), MaxProcesses)
	case c.Self < 0 || c.Self >= len(c.Addrs):
		return c, fmt.Errorf("transport: config: Self %d out of range [0, %d)", c.Self, len(c.Addrs))
	case c.Credits < 1 || c.Credits > MaxCredits:
		return c, fmt.Errorf("transport: config: Credits %d; want 1 to %d", c.Credits, MaxCredits)
	case c.Heartbeat < 0 || c.Timeout <= c.Heartbeat:
		return c, fmt.Errorf("transport: config: Timeout %v must exceed Heartbeat %v", c.Timeout, c.Heartbeat)
	case c.DialTimeout < 0:
		return c, fmt.Errorf("transport: config: negative DialTimeout %v", c.DialTimeout)
	case len(c.Fingerprint) > maxFingerprint:
		return c, fmt.Errorf("transport: config: fingerprint of %d bytes exceeds %d", len(c.Fingerprint), maxFingerprint)
	}
	return c, nil
}
