package nats

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// How long to keep trying a server that does not answer, and the longest
// pause between two tries.
const (
	connectRetry    = 10 * time.Second
	connectMaxPause = time.Second
)

// apiTimeout bounds each request to the JetStream API.
const apiTimeout = 10 * time.Second

// checkURL refuses an address the client could not use, and returns the
// address as errors name it (without a password).
func checkURL(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", errors.New("nats: no URL")
	}
	var shown []string
	for _, one := range strings.Split(raw, ",") {
		one = strings.TrimSpace(one)
		s := one
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return "", fmt.Errorf("nats: bad URL %q: %v", hideUser(one), err)
		}
		switch {
		case u.Scheme != "nats" && u.Scheme != "tls" && u.Scheme != "ws" && u.Scheme != "wss":
			return "", fmt.Errorf("nats: bad URL %q: scheme %q, want nats, tls, ws or wss", u.Redacted(), u.Scheme)
		case u.Hostname() == "":
			return "", fmt.Errorf("nats: bad URL %q: no host", u.Redacted())
		}
		if p := u.Port(); p != "" {
			if _, err := net.LookupPort("tcp", p); err != nil {
				return "", fmt.Errorf("nats: bad URL %q: port %q", u.Redacted(), p)
			}
		}
		shown = append(shown, u.Redacted())
	}
	return strings.Join(shown, ","), nil
}

// hideUser hides the user and password of an address that does not
// parse.
func hideUser(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if at := strings.LastIndex(rest, "@"); ok && at >= 0 {
		return scheme + "://xxxxx@" + rest[at+1:]
	}
	return s
}

// connect connects to the server at raw, trying again with growing
// pauses for connectRetry while it cannot be reached. addr is the
// address as errors name it.
func connect(raw, addr, name string) (*natsio.Conn, error) {
	deadline := time.Now().Add(connectRetry)
	pause := 50 * time.Millisecond
	for {
		nc, err := natsio.Connect(raw, natsio.Name(name), natsio.Timeout(2*time.Second))
		if err == nil {
			return nc, nil
		}
		if errors.Is(err, natsio.ErrAuthorization) || errors.Is(err, natsio.ErrAuthExpired) || errors.Is(err, natsio.ErrAuthRevoked) {
			return nil, fmt.Errorf("nats: connecting to %s: %w", addr, err)
		}
		if time.Now().Add(pause).After(deadline) {
			return nil, fmt.Errorf("nats: cannot reach %s (tried for %v): %w", addr, connectRetry, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, connectMaxPause)
	}
}

// openStream returns the stream name at the server, with a clear error
// if the stream or JetStream is missing.
func openStream(js jetstream.JetStream, name, addr string) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	s, err := js.Stream(ctx, name)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return nil, fmt.Errorf("nats: stream %s not found at %s", name, addr)
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return nil, fmt.Errorf("nats: JetStream is not enabled at %s (stream %s)", addr, name)
	default:
		return nil, fmt.Errorf("nats: stream %s at %s: %w", name, addr, err)
	}
}
