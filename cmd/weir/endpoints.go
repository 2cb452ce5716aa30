package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nuid"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/connector/nats"
)

// endpoint is a --source or --sink URI:
//
//	kafka://host:port[,host:port]/topic   (see kafka.ParseURI; a sink also
//	                                      takes ?txn=PREFIX, its transactional ids;
//	                                      a source ?group=NAME, a consumer group
//	                                      it starts from and commits to)
//	nats://host:port/stream               (a JetStream stream; subject = stream;
//	                                      a source takes ?consumer=NAME, what its
//	                                      durable consumers' names start with, or
//	                                      ?ordered=1)
//	file://path                           (a file of lines)
//	postgres://user@host:port/db?table=T  (a sink of a job's results)
//	redis://host:port[/db][?prefix=P]     (a sink of YSB's results)
type endpoint struct {
	flag, uri string
	scheme    string
	kafka     kafka.Config
	name      string // topic, stream, file path, table or key prefix
	url       string // nats, postgres or redis URL without the name
	txn       string // a Kafka sink's transactional id prefix (?txn=)
	group     string // a Kafka source's consumer group (?group=)
	// What a NATS source's durable consumers' names start with
	// (?consumer=), or an ordered consumer instead (?ordered=1).
	consumer string
	ordered  bool
}

func (e endpoint) String() string { return e.flag + " " + e.uri }

// parseEndpoint parses the URI given to flag; kinds are the schemes it
// takes there.
func parseEndpoint(flag, uri string, kinds ...string) (endpoint, error) {
	ep := endpoint{flag: flag, uri: uri}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || !contains(kinds, scheme) {
		return ep, fmt.Errorf("%s %s: want a URI: %s", flag, uri, strings.Join(schemeForms(kinds), ", "))
	}
	ep.scheme = scheme
	var err error
	switch scheme {
	case "kafka":
		var rest string
		if rest, ep.txn, err = cutParam(uri, "txn"); err == nil {
			rest, ep.group, err = cutParam(rest, "group")
		}
		if err == nil {
			ep.kafka, ep.name, err = kafka.ParseURI(rest)
		}
	case "file":
		ep.name = rest
		if rest == "" {
			err = fmt.Errorf("no path")
		}
	case "nats":
		u, perr := url.Parse(uri)
		if perr != nil {
			err = perr
			break
		}
		ep.name = strings.Trim(u.Path, "/")
		if ep.name == "" || strings.Contains(ep.name, "/") || u.Host == "" {
			err = fmt.Errorf("want nats://host:port/stream")
		}
		q := u.Query()
		ep.consumer = q.Get("consumer")
		switch o := q.Get("ordered"); o {
		case "", "0", "false":
		case "1", "true":
			ep.ordered = true
		default:
			err = fmt.Errorf("ordered=%s: want 1 or 0", o)
		}
		if ep.ordered && ep.consumer != "" {
			err = fmt.Errorf("both consumer= and ordered=1: an ordered consumer has no name")
		}
		u.Path, u.RawQuery = "", ""
		ep.url = u.String()
	case "postgres", "postgresql":
		ep.url, ep.name, err = cutParam(uri, "table")
	case "redis":
		ep.url, ep.name, err = cutParam(uri, "prefix")
	}
	if err != nil {
		return ep, fmt.Errorf("%s %s: %v", flag, uri, strings.TrimPrefix(err.Error(), "kafka: "))
	}
	return ep, nil
}

// cutParam removes query parameter key from uri and returns its value.
func cutParam(uri, key string) (string, string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	v := q.Get(key)
	q.Del(key)
	u.RawQuery = q.Encode()
	return u.String(), v, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y || x == "postgresql" && y == "postgres" {
			return true
		}
	}
	return false
}

func schemeForms(kinds []string) []string {
	forms := map[string]string{
		"kafka": "kafka://host:port/topic", "nats": "nats://host:port/stream", "file": "file://path",
		"postgres": "postgres://user@host:port/db?table=name", "redis": "redis://host:port",
	}
	var out []string
	for _, k := range kinds {
		out = append(out, forms[k])
	}
	return out
}

// lineSource opens a source of the decoded lines (messages) of ep. With
// ts, a Kafka reader hands out its partitions' records in step by that
// event time (kafka.SourceInput.EventTime), a partition that gives
// nothing for 10 s while behind its end aside (so a fetch that stalls
// for less makes no record late).
func lineSource[T any](ep endpoint, bounded bool, dl *file.DeadLetter, decode func(string) (T, error), ts func(T) int64) (weir.Input[T], error) {
	switch ep.scheme {
	case "kafka":
		if ep.txn != "" {
			return nil, fmt.Errorf("%s: txn= names a sink's transactional ids; a source takes none", ep)
		}
		cfg := kafka.SourceConfig{Config: ep.kafka, Topic: ep.name, Bounded: bounded, DeadLetter: dl, Group: ep.group}
		if ep.group != "" {
			cfg.Start = kafka.StartCommitted
		}
		in := kafka.Source(cfg,
			func(m kafka.Message) (T, error) { return decode(string(m.Value)) })
		if ts != nil {
			in = in.EventTime(ts, 10*time.Second)
		}
		return in, nil
	case "nats":
		return nats.Source(nats.SourceConfig{URL: ep.url, Stream: ep.name, Bounded: bounded, DeadLetter: dl, Consumer: ep.consumer, Ordered: ep.ordered},
			func(b []byte) (T, error) { return decode(string(b)) }), nil
	case "file":
		return file.JSONLines([]string{ep.name}, decode, file.Options{DeadLetter: dl}), nil
	}
	return nil, fmt.Errorf("%s: not a source", ep)
}

// lineSink opens a sink that writes format's line (message) of each
// record to ep. A NATS message's id is a hash of its bytes, so equal
// lines within the stream's duplicate window are one, unless unique
// gives each message an id of its own (then a replay after a restart
// publishes again: at-least-once).
func lineSink[T any](ep endpoint, format func(T, []byte) []byte, unique bool) (weir.Output[T], error) {
	switch ep.scheme {
	case "kafka":
		if ep.group != "" {
			return nil, fmt.Errorf("%s: group= names a source's consumer group; a sink takes none", ep)
		}
		return kafka.Sink(kafka.SinkConfig{Config: ep.kafka, Topic: ep.name, Create: true, TransactionalID: ep.txn},
			func(v T) ([]byte, []byte) { return nil, format(v, nil) }), nil
	case "nats":
		if ep.consumer != "" || ep.ordered {
			return nil, fmt.Errorf("%s: consumer= and ordered= say how a source reads; a sink takes neither", ep)
		}
		cfg := nats.SinkConfig{URL: ep.url, Stream: ep.name, Create: true}
		if unique {
			cfg.ID = func([]byte) string { return nuid.Next() }
		}
		return nats.Sink(cfg, format), nil
	case "file":
		return newLineFile[T](ep.name, format), nil
	}
	return nil, fmt.Errorf("%s: takes no records of this job", ep)
}

// checkNow checks the connectors, within a minute in all.
func checkNow(ctx context.Context, cs ...any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, c := range cs {
		if err := check(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// check asks a connector that can check its server and topic before the
// job runs to do so.
func check(ctx context.Context, c any) error {
	if ch, ok := c.(interface{ Check(context.Context) error }); ok {
		return ch.Check(ctx)
	}
	return nil
}

// lineFile is a sink that writes lines to a file, made (emptied) at its
// first write, flushed at every epoch's end. In a job with checkpoints it
// is exactly-once (weir.Checkpointed): a checkpoint saves the file's
// length once flushed, and a restored job cuts the file back to it and
// appends.
type lineFile[T any] struct {
	mu     sync.Mutex
	path   string
	format func(T, []byte) []byte
	f      *os.File
	bw     *bufio.Writer
	buf    []byte
	size   int64 // written and flushed
	resume bool  // Restore set size: open, cut back to it and append
}

func newLineFile[T any](path string, format func(T, []byte) []byte) *lineFile[T] {
	return &lineFile[T]{path: path, format: format}
}

// open opens the file at the first write. l.mu is held.
func (l *lineFile[T]) open() error {
	if l.f != nil {
		return nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if l.resume {
		flags = os.O_WRONLY
	}
	f, err := os.OpenFile(l.path, flags, 0o644)
	if err == nil && l.resume {
		if err = f.Truncate(l.size); err == nil {
			_, err = f.Seek(l.size, io.SeekStart)
		}
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return fmt.Errorf("file: %v", unwrapPath(err))
	}
	l.f, l.bw = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

func (l *lineFile[T]) Write(batch []T) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		return err
	}
	for i := range batch {
		l.buf = append(l.format(batch[i], l.buf[:0]), '\n')
		if _, err := l.bw.Write(l.buf); err != nil {
			return fmt.Errorf("file: %s: %v", l.path, err)
		}
		l.size += int64(len(l.buf))
	}
	return nil
}

// flush writes out the buffer. l.mu is held.
func (l *lineFile[T]) flush() error {
	if l.bw == nil {
		return nil
	}
	if err := l.bw.Flush(); err != nil {
		return fmt.Errorf("file: %s: %v", l.path, err)
	}
	return nil
}

func (l *lineFile[T]) EndEpoch(uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flush()
}

// Snapshot implements weir.Checkpointed: the file's length, flushed and
// synced.
func (l *lineFile[T]) Snapshot() ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flush(); err != nil {
		return nil, err
	}
	if l.f != nil {
		if err := l.f.Sync(); err != nil {
			return nil, fmt.Errorf("file: %s: %v", l.path, err)
		}
	}
	return binary.AppendUvarint(nil, uint64(l.size)), nil
}

// Restore implements weir.Checkpointed: the file is cut back to the
// length it had at the checkpoint, and written on from there.
func (l *lineFile[T]) Restore(data []byte) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || k != len(data) {
		return fmt.Errorf("file: %s: a checkpoint's length of %d bytes is corrupt", l.path, len(data))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st, err := os.Stat(l.path); err != nil || st.Size() < int64(n) {
		return fmt.Errorf("file: %s: holds less than the %d bytes it had at the checkpoint (%v)", l.path, n, err)
	}
	l.size, l.resume = int64(n), true
	return nil
}

func (l *lineFile[T]) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil { // an empty output is a file too
		return err
	}
	if err := l.flush(); err != nil {
		return err
	}
	err := l.f.Close()
	l.f, l.bw = nil, nil
	l.resume = true // another instance's Close appends, never empties
	return err
}
