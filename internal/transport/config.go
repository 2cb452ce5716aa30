package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
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
	MaxProcesses = 1 << 16 // process indexes travel as uint16
	MaxCredits   = 1 << 16
)

// Config describes one process of the mesh. All processes of a job pass
// the same Addrs, Settings, Secret, Credits and TLS CA; only Self (and
// each process's certificate) differs.
type Config struct {
	// Self is this process's index in Addrs.
	Self int
	// Addrs holds the host:port of every process, by index; Addrs[Self]
	// is where this process listens: on the addresses of this machine
	// that its host resolves to, not on every interface (unless the host
	// is empty or an unspecified address such as 0.0.0.0).
	Addrs []string
	// Settings describe the job: every peer must have the same names
	// with the same values (in any order). They are shown only to a peer
	// that proved the secret; a peer whose settings differ is refused on
	// both sides with a *MismatchError naming the first setting that
	// differs. Names must be unique and not empty; encoded, the list
	// takes at most MaxSettingsSize bytes.
	Settings []Setting
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
	// also bounds each handshake (a connection that has not completed
	// its handshake by then is dropped), each write and the wait of
	// Close.
	// Default DefaultTimeout; it must exceed Heartbeat.
	Timeout time.Duration
	// DialTimeout is how long Dial keeps trying to reach its peers and
	// waits for them to connect. Default DefaultDialTimeout.
	DialTimeout time.Duration
	// TLS, if set, makes every connection mutual TLS 1.3 (the secret's
	// handshake still runs inside): Certificates (or GetCertificate) is
	// this process's certificate, presented both as server and as
	// client, and RootCAs the pool every peer's certificate must chain
	// to, in both directions (ClientCAs, if set, is used for the peers
	// that dial us). Host names are not checked: a certificate of the
	// job's CA admits a process, whatever its address. Dial sets the
	// version, client authentication and verification itself. LoadTLS
	// reads a configuration from PEM files.
	TLS *tls.Config
	// Logger receives refusals, failures and connections. Default
	// slog.Default().
	Logger *slog.Logger
	// Listener is an already open listener for Addrs[Self] (tests listen
	// on port 0). Dial takes it over and closes it when the mesh is
	// complete or failed (an elastic mesh: when it stops). Nil: Dial
	// listens on Addrs[Self].
	Listener net.Listener

	// Elastic makes the mesh elastic: Addrs lists the address of every
	// slot a process may take (the hello's process count is the slot
	// count), and processes join and leave while it runs. Dial returns
	// an Elastic. Who is present at the start is Members, or what the
	// processes reached through Join say.
	Elastic bool
	// Members are the slots of the processes started together, Self
	// among them: Dial returns once they are all connected (and any
	// process that joined them meanwhile). Empty: this process starts
	// the job alone, unless it joins one (Join). Elastic only.
	Members []int
	// Join lists addresses at which a process of the running job may
	// answer (a --join address, the other slots' addresses, a service's):
	// Dial asks the first that answers, whatever its slot, to let this
	// process in; it learns from it who is present and connects to them.
	// Elastic only; not with Members.
	Join []string
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
	}
	if err := checkSettings(c.Settings); err != nil {
		return c, fmt.Errorf("transport: config: %w", err)
	}
	if err := c.checkElastic(); err != nil {
		return c, fmt.Errorf("transport: config: %w", err)
	}
	if c.TLS != nil {
		if err := checkTLS(c.TLS); err != nil {
			return c, fmt.Errorf("transport: config: TLS: %w", err)
		}
	}
	return c, nil
}

// checkElastic checks Elastic, Members and Join.
func (c Config) checkElastic() error {
	switch {
	case !c.Elastic && (len(c.Members) > 0 || len(c.Join) > 0):
		return errors.New("Members and Join are for an elastic mesh (Elastic)")
	case len(c.Members) > 0 && len(c.Join) > 0:
		return errors.New("Members (processes started together) and Join (a process joining a running job) exclude each other")
	case len(c.Members) > 0 && !slices.Contains(c.Members, c.Self):
		return fmt.Errorf("Members %v do not hold Self %d", c.Members, c.Self)
	}
	seen := make(map[int]bool, len(c.Members))
	for _, m := range c.Members {
		switch {
		case m < 0 || m >= len(c.Addrs):
			return fmt.Errorf("member %d out of range [0, %d)", m, len(c.Addrs))
		case seen[m]:
			return fmt.Errorf("member %d given twice", m)
		}
		seen[m] = true
	}
	for _, a := range c.Join {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("Join address %q: %w", a, err)
		}
	}
	return nil
}
