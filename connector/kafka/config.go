package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config says how to reach a Kafka cluster.
type Config struct {
	// Brokers are the seed brokers, host:port each.
	Brokers []string
	// TLS, if set, is used for every connection.
	TLS *tls.Config
	// SASL, if set, authenticates every connection (plain.Auth{...}.AsMechanism(),
	// scram.Auth{...}.AsSha256Mechanism(), ...).
	SASL sasl.Mechanism
	// Connect bounds how long an unreachable cluster is retried, with
	// backoff, before the connector reports it (default 10 s).
	Connect time.Duration
}

// ParseURI parses kafka://[user:password@]host:port[,host:port...]/topic
// with the query parameters tls=1 (TLS with the system's roots) and
// sasl=plain, scram-sha-256 or scram-sha-512 (default plain when a user is
// given). It returns the cluster's config and the topic.
func ParseURI(uri string) (Config, string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return Config{}, "", fmt.Errorf("kafka: %q: %v", uri, err)
	}
	if u.Scheme != "kafka" {
		return Config{}, "", fmt.Errorf("kafka: %q: the scheme is %q, want kafka://host:port/topic", uri, u.Scheme)
	}
	var cfg Config
	for _, b := range strings.Split(u.Host, ",") {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return Config{}, "", fmt.Errorf("kafka: %q: broker %q: %v (want host:port)", uri, b, err)
		}
		cfg.Brokers = append(cfg.Brokers, b)
	}
	topic := strings.Trim(u.Path, "/")
	if topic == "" || strings.Contains(topic, "/") {
		return Config{}, "", fmt.Errorf("kafka: %q: want one topic after the brokers, as kafka://host:port/topic", uri)
	}
	q := u.Query()
	for k := range q {
		if k != "tls" && k != "sasl" {
			return Config{}, "", fmt.Errorf("kafka: %q: unknown parameter %q (known: tls, sasl)", uri, k)
		}
	}
	switch q.Get("tls") {
	case "", "0", "false":
	case "1", "true":
		cfg.TLS = &tls.Config{}
	default:
		return Config{}, "", fmt.Errorf("kafka: %q: tls=%q, want 1 or 0", uri, q.Get("tls"))
	}
	mech := q.Get("sasl")
	if u.User == nil && mech != "" {
		return Config{}, "", fmt.Errorf("kafka: %q: sasl=%s needs user:password@ before the brokers", uri, mech)
	}
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		switch mech {
		case "", "plain":
			cfg.SASL = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "scram-sha-256":
			cfg.SASL = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case "scram-sha-512":
			cfg.SASL = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		default:
			return Config{}, "", fmt.Errorf("kafka: %q: sasl=%q, want plain, scram-sha-256 or scram-sha-512", uri, mech)
		}
	}
	return cfg, topic, nil
}

func (c Config) where() string { return strings.Join(c.Brokers, ",") }

func (c Config) validate() error {
	if len(c.Brokers) == 0 {
		return errors.New("kafka: no brokers")
	}
	return nil
}

// opts are the client options every client of the cluster takes.
func (c Config) opts() []kgo.Opt {
	o := []kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.DialTimeout(3 * time.Second), kgo.RetryTimeout(c.connect())}
	if c.TLS != nil {
		o = append(o, kgo.DialTLSConfig(c.TLS.Clone()))
	}
	if c.SASL != nil {
		o = append(o, kgo.SASL(c.SASL))
	}
	return o
}

func (c Config) connect() time.Duration {
	if c.Connect > 0 {
		return c.Connect
	}
	return 10 * time.Second
}

// dial makes a client and checks that the cluster answers, retrying with
// backoff for c.Connect; the error names the brokers.
func (c Config) dial(extra ...kgo.Opt) (*kgo.Client, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(c.opts(), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %s: %v", c.where(), err)
	}
	deadline := time.Now().Add(c.connect())
	wait := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = cl.Ping(ctx)
		cancel()
		if err == nil {
			return cl, nil
		}
		if time.Now().Add(wait).After(deadline) || authFailure(err) {
			cl.Close()
			hint := ""
			if c.SASL != nil {
				hint = fmt.Sprintf(" (with SASL %s: are the user and password right?)", c.SASL.Name())
			}
			return nil, fmt.Errorf("kafka: cannot reach the brokers %s (tried for %v): %v%s", c.where(), c.connect(), err, hint)
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

func authFailure(err error) bool {
	s := err.Error()
	return strings.Contains(s, "SASL") || strings.Contains(s, "authentication") || strings.Contains(s, "tls:")
}

// partitions returns the number of partitions of topic, or an error that
// says it does not exist.
func partitions(ctx context.Context, adm *kadm.Client, c Config, topic string) (int32, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("kafka: %s: metadata of topic %s: %v", c.where(), topic, err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		if ok && !errors.Is(td.Err, errUnknownTopic) {
			return 0, fmt.Errorf("kafka: %s: topic %s: %v", c.where(), topic, td.Err)
		}
		return 0, fmt.Errorf("kafka: topic %s %w at %s", topic, errMissing, c.where())
	}
	return int32(len(td.Partitions)), nil
}

var (
	errUnknownTopic = kerr.UnknownTopicOrPartition
	errExists       = kerr.TopicAlreadyExists
	errMissing      = errors.New("does not exist")
)
