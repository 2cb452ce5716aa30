package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// connectWait is how long connect keeps trying a server that does not
// answer before it gives up.
const connectWait = 10 * time.Second

// batchSize is the most commands of one kind a pipeline carries.
const batchSize = 1000

// redact returns rawURL with any password replaced, for messages.
func redact(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Redacted()
	}
	// Unparsable: hide whatever stands between the scheme and an '@'.
	if i := strings.Index(rawURL, "://"); i >= 0 {
		if j := strings.LastIndex(rawURL[i+3:], "@"); j >= 0 {
			return rawURL[:i+3] + "xxxxx" + rawURL[i+3+j:]
		}
	}
	return rawURL
}

// options parses a redis:// (rediss://, unix://) URL into client options.
func options(rawURL string) (*goredis.Options, error) {
	if rawURL == "" {
		return nil, errors.New(`redis: no URL; want one like "redis://127.0.0.1:6379/0"`)
	}
	opt, err := goredis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, password and all
		}
		return nil, fmt.Errorf("redis: bad URL %q: %w", redact(rawURL), err)
	}
	// The server may be any Redis; the client's maintenance-notification
	// handshake is for managed services and only adds a round trip.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	opt.DialerRetries = 1 // connect retries on its own, with a longer backoff
	return opt, nil
}

// newClient makes a client, turning a panic of the client's constructor
// (a setting it cannot use) into an error.
func newClient(opt *goredis.Options, rawURL string) (c *goredis.Client, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("redis: cannot use URL %q: %v", redact(rawURL), r)
		}
	}()
	return goredis.NewClient(opt), nil
}

// connect makes a client for rawURL and checks it with PING, retrying a
// server that does not answer with a growing backoff for connectWait (or
// until ctx ends). An error reply of the server (a wrong password, say)
// is not retried, but for LOADING (the server is reading its data).
func connect(ctx context.Context, rawURL string) (*goredis.Client, error) {
	opt, err := options(rawURL)
	if err != nil {
		return nil, err
	}
	// The checks go through a client of one connection that does not
	// retry a command itself: an attempt fails fast, and once a dial has
	// failed the client probes the server each second on its own, so a
	// server that comes up is found within a second or so.
	probeOpt := *opt
	probeOpt.MaxRetries, probeOpt.PoolSize, probeOpt.MinIdleConns = -1, 1, 0
	probe, err := newClient(&probeOpt, rawURL)
	if err != nil {
		return nil, err
	}
	if err := ping(ctx, probe, opt.Addr, rawURL); err != nil {
		return nil, err
	}
	return newClient(opt, rawURL)
}

// ping checks c with PING, retrying as connect says, and closes it.
func ping(ctx context.Context, c *goredis.Client, addr, rawURL string) error {
	defer c.Close()
	start := time.Now()
	backoff := 50 * time.Millisecond
	var last error // the last failure that was not ctx's
	for attempt := 1; ; attempt++ {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		var reply goredis.Error
		if errors.As(err, &reply) && !strings.HasPrefix(err.Error(), "LOADING") {
			return fmt.Errorf("redis: %s (URL %q) refused PING: %w", addr, redact(rawURL), err)
		}
		if ctx.Err() != nil || time.Since(start)+backoff > connectWait {
			err = fmt.Errorf("redis: cannot reach %s (URL %q) after %d attempts in %v: %w",
				addr, redact(rawURL), attempt, time.Since(start).Round(time.Millisecond), last)
			if ctx.Err() != nil && last != ctx.Err() {
				err = fmt.Errorf("%w (stopped: %w)", err, ctx.Err())
			}
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// keyError names the key in an error of a command on it: the server's
// WRONGTYPE reply says only that some key holds the wrong kind of value.
func keyError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return fmt.Errorf("redis: %s %q: the key holds a value of another type than %s needs (%w)", op, key, op, err)
	}
	return fmt.Errorf("redis: %s %q: %w", op, key, err)
}

// cmdError returns the first error of a pipeline's commands, naming the
// command and its key.
func cmdError(cmds []goredis.Cmder) error {
	for _, c := range cmds {
		err := c.Err()
		if err == nil || errors.Is(err, goredis.Nil) {
			continue
		}
		key := ""
		if args := c.Args(); len(args) > 1 {
			key = fmt.Sprint(args[1])
		}
		return keyError(strings.ToUpper(c.Name()), key, err)
	}
	return nil
}

// pipelined runs fill's commands in one round trip (in MULTI/EXEC if
// tx) and returns the first error, naming its command and key.
func pipelined(ctx context.Context, c *goredis.Client, tx bool, fill func(p goredis.Pipeliner)) error {
	run := c.Pipelined
	if tx {
		run = c.TxPipelined
	}
	cmds, err := run(ctx, func(p goredis.Pipeliner) error {
		fill(p)
		return nil
	})
	if e := cmdError(cmds); e != nil {
		return e
	}
	if err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis: pipeline of %d commands: %w", len(cmds), err)
	}
	return nil
}

// newID returns a random (version 4) UUID in its usual text form, as the
// original benchmark names its windows and window lists.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// globEscape escapes the glob characters of s for a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
