package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirstream/weir"
)

// Config says where a sink writes and what a row is.
type Config struct {
	// URL is the server's address and database, as a URL
	// (postgres://user:password@host:5432/db?sslmode=disable) or as
	// key=value settings; PG* environment variables fill in what it
	// leaves out.
	URL string
	// Table is the target table, optionally qualified by its schema
	// (schema.table). Names are quoted as given, so they are
	// case-sensitive.
	Table string
	// Columns are the columns a row gives, in the order row appends
	// their values.
	Columns []string
	// Key lists the columns of the table's primary key or of one of its
	// unique constraints, all of them among Columns: a row replaces the
	// table's row with the same key, or adds one.
	Key []string
	// Name names the sink's fence row and staging table (default: the
	// table's name without its schema). Two sinks writing one table need
	// two names.
	Name string
	// Create, if not empty, holds the column definitions and constraints
	// of the table ("k text PRIMARY KEY, n bigint"), which is created
	// with them if it does not exist. Empty, a missing table is an
	// error.
	Create string
	// ConnectWait is how long the sink keeps trying to reach the server,
	// with growing pauses between attempts, before it gives up (default
	// 10 s).
	ConnectWait time.Duration
}

// Sink is the output Upsert returns. It implements weir.Output,
// weir.EpochSink and weir.TwoPhase, and is safe for concurrent use.
type Sink[T any] struct {
	cfg  Config
	row  func(T, []any) []any
	err  error // a bad setting, which every call reports
	conf *pgx.ConnConfig
	addr string // host:port, for errors
	wait time.Duration
	// lookup is the table's name as given, quoted.
	lookup string

	twoPhase atomic.Bool // the job takes checkpoints: rows wait for them

	mu    sync.Mutex // guards buf and spare
	buf   []any      // rows written and not yet handed to the server, len(Columns) values each
	spare []any      // a buffer to reuse

	db     sync.Mutex // serializes the use of the connection and guards what follows
	conn   *pgx.Conn
	q      statements // made once the table is found
	oid    uint32     // the table's
	ready  bool       // the target was checked on conn
	staged bool       // the fence and staging tables are ready on conn
	batch  bool       // the batch table is ready on conn
	last   uint64     // the highest checkpoint seen
	seq    int64      // the last sequence number given to a staged row
}

var (
	_ weir.Output[int] = (*Sink[int])(nil)
	_ weir.EpochSink   = (*Sink[int])(nil)
	_ weir.TwoPhase    = (*Sink[int])(nil)
)

// Names of the staging table's own columns.
const (
	ckptCol = "weir_checkpoint"
	seqCol  = "weir_seq"
)

// Upsert returns an output that writes the records of a stream into
// cfg.Table, each as the row that row appends to dst (one value per
// column of cfg.Columns, in order): a row whose key the table holds
// replaces that row, others are added. In a job with checkpoints it is
// exactly-once; without, at-least-once (see the package documentation).
//
// Settings that need no server are checked here, and a bad one is
// reported by every call of the sink (the first is Write, or Recover at
// the start of a job with checkpoints), which the job then fails with.
// The table, its columns and its key are checked on the first contact
// with the server: at the start of a job with checkpoints, at the end of
// the first epoch without.
func Upsert[T any](cfg Config, row func(v T, dst []any) []any) *Sink[T] {
	s := &Sink[T]{cfg: cfg, row: row, wait: cfg.ConnectWait}
	if s.wait <= 0 {
		s.wait = 10 * time.Second
	}
	s.err = s.configure()
	return s
}

// configure checks the settings that need no server.
func (s *Sink[T]) configure() error {
	cfg := s.cfg
	switch {
	case s.row == nil:
		return errors.New("postgres: Upsert needs a row function")
	case cfg.URL == "":
		return errors.New("postgres: Config.URL is empty")
	case strings.TrimSpace(cfg.Table) == "":
		return errors.New("postgres: Config.Table is empty")
	case len(cfg.Columns) == 0:
		return fmt.Errorf("postgres: %s: Config.Columns is empty", cfg.Table)
	case len(cfg.Key) == 0:
		return fmt.Errorf("postgres: %s: Config.Key is empty: the upsert needs the columns of a primary key or unique constraint", cfg.Table)
	}
	seen := map[string]bool{}
	for _, c := range cfg.Columns {
		switch {
		case c == "":
			return fmt.Errorf("postgres: %s: Config.Columns holds an empty name", cfg.Table)
		case c == ckptCol || c == seqCol:
			return fmt.Errorf("postgres: %s: column %q: the name is the staging table's own", cfg.Table, c)
		case seen[c]:
			return fmt.Errorf("postgres: %s: column %q is listed twice in Config.Columns", cfg.Table, c)
		}
		seen[c] = true
	}
	keys := map[string]bool{}
	for _, k := range cfg.Key {
		if !seen[k] {
			return fmt.Errorf("postgres: %s: key column %q is not among Config.Columns %v", cfg.Table, k, cfg.Columns)
		}
		if keys[k] {
			return fmt.Errorf("postgres: %s: key column %q is listed twice in Config.Key", cfg.Table, k)
		}
		keys[k] = true
	}
	conf, err := pgx.ParseConfig(cfg.URL)
	if err != nil {
		return fmt.Errorf("postgres: Config.URL: %w", err)
	}
	s.conf, s.addr = conf, address(conf)
	id := tableIdent(cfg.Table)
	for _, part := range id {
		if part == "" {
			return fmt.Errorf("postgres: Config.Table %q: want a name or schema.name", cfg.Table)
		}
	}
	s.lookup = id.Sanitize()
	return nil
}

// Write implements weir.Output: it keeps the rows of batch until the
// epoch ends (without checkpoints) or the next checkpoint.
func (s *Sink[T]) Write(batch []T) error {
	if s.err != nil {
		return s.err
	}
	width := len(s.cfg.Columns)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range batch {
		n := len(s.buf)
		s.buf = s.row(v, s.buf)
		if got := len(s.buf) - n; got != width {
			s.buf = s.buf[:n]
			return fmt.Errorf("postgres: %s: the row function gave %d values for %d columns %v", s.cfg.Table, got, width, s.cfg.Columns)
		}
		for i := n; i < len(s.buf); i++ {
			if b, ok := s.buf[i].([]byte); ok {
				s.buf[i] = bytes.Clone(b) // it may be the record's, which changes after Write
			}
		}
	}
	return nil
}

// take hands over the rows written so far. The caller holds s.db, so
// that rows reach the server in the order they were taken.
func (s *Sink[T]) take() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := s.buf
	s.buf, s.spare = s.spare, nil
	return rows
}

// give back the rows take returned: done, they leave room for more;
// not, they go back before the rows written since.
func (s *Sink[T]) giveBack(rows []any, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !done {
		s.buf = append(rows, s.buf...)
		return
	}
	if s.spare == nil {
		clear(rows)
		s.spare = rows[:0]
	}
}

// EndEpoch implements weir.EpochSink. Without checkpoints it upserts the
// rows written since the last epoch's end in one transaction; with
// checkpoints the rows wait for Prepare.
func (s *Sink[T]) EndEpoch(uint64) error {
	if s.err != nil {
		return s.err
	}
	if s.twoPhase.Load() {
		return nil
	}
	s.db.Lock()
	defer s.db.Unlock()
	return s.flush()
}

// flush upserts the rows written so far. The caller holds s.db.
func (s *Sink[T]) flush() error {
	rows := s.take()
	if len(rows) == 0 {
		s.giveBack(rows, true)
		if s.ready {
			return nil
		}
		// Nothing to send yet, but a bad table should fail the job now.
		return s.run(needTarget, "connecting", func(context.Context, *pgx.Conn) error { return nil })
	}
	err := s.run(needBatch, "upserting rows", func(ctx context.Context, c *pgx.Conn) error { return s.upsertRows(ctx, c, rows) })
	s.giveBack(rows, err == nil)
	return err
}

// Close implements weir.Output: the job has finished, so every row
// written becomes visible (with checkpoints, those staged and not yet
// committed too). The connection is closed; a later call opens another.
func (s *Sink[T]) Close() error {
	if s.err != nil {
		return s.err
	}
	s.db.Lock()
	defer s.db.Unlock()
	var err error
	if s.twoPhase.Load() {
		n := s.last + 1
		if err = s.prepare(n); err == nil {
			err = s.commit(n)
		}
	} else {
		err = s.flush()
	}
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.conn.Close(ctx)
		cancel()
		s.conn = nil
	}
	return err
}

// Prepare implements weir.TwoPhase: the rows written since the last
// Prepare are staged, tagged with checkpoint n, in one transaction. They
// are durable, but not in the table yet.
func (s *Sink[T]) Prepare(n uint64) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.checkpointNumber(n); err != nil {
		return nil, err
	}
	s.twoPhase.Store(true)
	s.db.Lock()
	defer s.db.Unlock()
	return nil, s.prepare(n)
}

// prepare stages the rows written so far as checkpoint n's. The caller
// holds s.db.
func (s *Sink[T]) prepare(n uint64) error {
	s.last = max(s.last, n)
	rows := s.take()
	if len(rows) == 0 {
		s.giveBack(rows, true)
		return nil
	}
	err := s.run(needStage, fmt.Sprintf("staging checkpoint %d", n), func(ctx context.Context, c *pgx.Conn) error {
		return s.stageRows(ctx, c, n, rows)
	})
	s.giveBack(rows, err == nil)
	return err
}

// Commit implements weir.TwoPhase: in one transaction, unless the sink's
// fence says checkpoint n is already in the table, the rows staged for
// checkpoints up to n are upserted (the latest row of each key), and
// the fence moves to n; the staged rows are deleted either way. Calling
// it again, or for an older checkpoint, changes nothing.
func (s *Sink[T]) Commit(n uint64, _ []byte) error {
	if s.err != nil {
		return s.err
	}
	if err := s.checkpointNumber(n); err != nil {
		return err
	}
	s.twoPhase.Store(true)
	s.db.Lock()
	defer s.db.Unlock()
	s.last = max(s.last, n)
	return s.commit(n)
}

// commit makes checkpoints up to n visible. The caller holds s.db.
func (s *Sink[T]) commit(n uint64) error {
	return s.run(needStage, fmt.Sprintf("committing checkpoint %d", n), func(ctx context.Context, c *pgx.Conn) error {
		return s.commitStaged(ctx, c, n)
	})
}

// Recover implements weir.TwoPhase, before a job restarted from
// checkpoint n (0: from the start) writes anything: the rows written or
// staged after n are discarded, and the fence goes back to n if it was
// past it, so that the rows the job writes again after n reach the table.
func (s *Sink[T]) Recover(n uint64) error {
	if s.err != nil {
		return s.err
	}
	if err := s.checkpointNumber(n); err != nil {
		return err
	}
	s.twoPhase.Store(true)
	s.db.Lock()
	defer s.db.Unlock()
	s.mu.Lock()
	clear(s.buf)
	s.buf = s.buf[:0]
	s.mu.Unlock()
	s.last = n
	return s.run(needStage, fmt.Sprintf("recovering at checkpoint %d", n), func(ctx context.Context, c *pgx.Conn) error {
		return s.recoverStaged(ctx, c, n)
	})
}

func (s *Sink[T]) checkpointNumber(n uint64) error {
	if n >= math.MaxInt64 {
		return fmt.Errorf("postgres: %s: checkpoint %d is beyond a bigint", s.cfg.Table, n)
	}
	return nil
}
