package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// What a step needs besides the checked target.
const (
	needTarget = iota
	needStage  // the fence and staging tables
	needBatch  // the session's batch table
)

// run runs step f of the sink on the connection, opening it first with
// what the step needs. If the connection was lost, it opens another and
// runs f once more: every step may run twice without harm (a row staged
// twice is the same row, the fence guards commits, an upsert repeated
// leaves the same table). The caller holds s.db.
func (s *Sink[T]) run(need int, what string, f func(context.Context, *pgx.Conn) error) error {
	ctx := context.Background()
	for try := 0; ; try++ {
		c, err := s.open(ctx, need)
		if err == nil {
			if err = f(ctx, c); err != nil {
				err = fmt.Errorf("postgres: %s: %s: %w", s.cfg.Table, what, err)
			}
		}
		if err == nil || try > 0 || s.conn == nil || !s.conn.IsClosed() {
			return err
		}
		s.conn = nil
	}
}

// open returns the connection, connecting and setting up what need says
// first if not done yet.
func (s *Sink[T]) open(ctx context.Context, need int) (*pgx.Conn, error) {
	if s.conn == nil || s.conn.IsClosed() {
		if err := s.connect(ctx); err != nil {
			return nil, err
		}
	}
	if !s.ready {
		if err := s.checkTarget(ctx); err != nil {
			return nil, err
		}
		s.ready = true
	}
	switch {
	case need == needStage && !s.staged:
		if err := s.setupStage(ctx); err != nil {
			return nil, err
		}
		s.staged = true
	case need == needBatch && !s.batch:
		if _, err := s.conn.Exec(ctx, s.q.createBatch); err != nil {
			return nil, fmt.Errorf("postgres: %s: creating the batch table: %w", s.cfg.Table, err)
		}
		s.batch = true
	}
	return s.conn, nil
}

// connect reaches the server, trying again with growing pauses until
// s.wait has passed while it cannot be reached (not when it refuses the
// login). Each attempt may take a second, even past s.wait.
func (s *Sink[T]) connect(ctx context.Context) error {
	start := time.Now()
	deadline := start.Add(s.wait)
	pause := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithDeadline(ctx, later(deadline, time.Now().Add(time.Second)))
		c, err := pgx.ConnectConfig(actx, s.conf)
		cancel()
		if err == nil {
			s.conn = c
			s.ready, s.staged, s.batch = false, false, false
			return nil
		}
		left := time.Until(deadline)
		if !retryable(err) || left <= 0 {
			if attempt == 1 {
				return fmt.Errorf("postgres: %s: %w", s.addr, err)
			}
			return fmt.Errorf("postgres: %s: %w (%d attempts in %s)", s.addr, err, attempt, time.Since(start).Round(100*time.Millisecond))
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, time.Second)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// retryable reports whether a failed connection attempt may succeed
// later: the server could not be reached, or it is starting or full.
// A refused login or a missing database will not change.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P03" || pe.Code == "53300" // cannot_connect_now, too_many_connections
	}
	return true
}

// address is the server's host:port, for errors.
func address(c *pgx.ConnConfig) string {
	if strings.HasPrefix(c.Host, "/") {
		return c.Host
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
}

// checkTarget finds the table (creating it if Config.Create says so),
// checks its columns and key, and makes the statements.
func (s *Sink[T]) checkTarget(ctx context.Context) error {
	const find = `SELECT c.oid, n.nspname, c.relname, c.relkind::text FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`
	var (
		oid            uint32
		nsp, rel, kind string
	)
	err := s.conn.QueryRow(ctx, find, s.lookup).Scan(&oid, &nsp, &rel, &kind)
	if errors.Is(err, pgx.ErrNoRows) && s.cfg.Create != "" {
		if err = s.exec(ctx, "CREATE TABLE IF NOT EXISTS "+s.lookup+" ("+s.cfg.Create+")"); err != nil {
			return fmt.Errorf("postgres: creating table %s: %w", s.lookup, err)
		}
		err = s.conn.QueryRow(ctx, find, s.lookup).Scan(&oid, &nsp, &rel, &kind)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: table %s does not exist in database %q at %s", s.lookup, s.conf.Database, s.addr)
	}
	if err != nil {
		return fmt.Errorf("postgres: looking up table %s: %w", s.lookup, err)
	}
	if kind != "r" && kind != "p" {
		return fmt.Errorf("postgres: %s is not a table (relkind %q)", s.lookup, kind)
	}
	types, err := s.columnTypes(ctx, oid)
	if err != nil {
		return fmt.Errorf("postgres: reading the columns of %s: %w", s.lookup, err)
	}
	var missing []string
	for _, c := range s.cfg.Columns {
		if _, ok := types[c]; !ok {
			missing = append(missing, strconv.Quote(c))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("postgres: table %s has no column %s (its columns: %s)", s.lookup, strings.Join(missing, ", "), strings.Join(sortedKeys(types), ", "))
	}
	if err := s.checkKey(ctx, oid); err != nil {
		return err
	}
	s.q, s.oid = newStatements(s.cfg, nsp, rel), oid
	return nil
}

// columnTypes returns the type of each column of relation oid.
func (s *Sink[T]) columnTypes(ctx context.Context, oid uint32) (map[string]string, error) {
	rows, _ := s.conn.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped`, oid)
	types := map[string]string{}
	var name, typ string
	_, err := pgx.ForEachRow(rows, []any{&name, &typ}, func() error {
		types[name] = typ
		return nil
	})
	return types, err
}

// checkKey checks that the table has a primary key or unique constraint
// (or index) on exactly the key columns, which ON CONFLICT needs.
func (s *Sink[T]) checkKey(ctx context.Context, oid uint32) error {
	rows, _ := s.conn.Query(ctx, `SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_index i
		CROSS JOIN LATERAL generate_series(0, i.indnkeyatts - 1) AS k
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[k]
		WHERE i.indrelid = $1 AND i.indisunique AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid`, oid)
	want := slices.Sorted(slices.Values(s.cfg.Key))
	found := false
	var cols []string
	_, err := pgx.ForEachRow(rows, []any{&cols}, func() error {
		found = found || slices.Equal(cols, want)
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: reading the keys of %s: %w", s.lookup, err)
	}
	if !found {
		return fmt.Errorf("postgres: table %s has no primary key or unique constraint on exactly (%s), which the upsert needs as its conflict target",
			s.lookup, strings.Join(quoteAll(s.cfg.Key), ", "))
	}
	return nil
}

// setupStage creates the fence table and the staging table if missing.
// A staging table made for other columns is made again if empty, and
// refused if not.
func (s *Sink[T]) setupStage(ctx context.Context) error {
	stage := s.q.stage.Sanitize()
	if err := s.exec(ctx, s.q.createFence); err != nil {
		return fmt.Errorf("postgres: creating the fence table: %w", err)
	}
	if err := s.exec(ctx, s.q.createStage); err != nil {
		return fmt.Errorf("postgres: creating staging table %s: %w", stage, err)
	}
	var oid uint32
	var staged int64
	err := s.conn.QueryRow(ctx, "SELECT to_regclass($1)::oid, (SELECT count(*) FROM "+stage+")", stage).Scan(&oid, &staged)
	var have map[string]string
	if err == nil {
		have, err = s.columnTypes(ctx, oid)
	}
	if err != nil {
		return fmt.Errorf("postgres: reading staging table %s: %w", stage, err)
	}
	target, err := s.columnTypes(ctx, s.oid)
	if err != nil {
		return fmt.Errorf("postgres: reading the columns of %s: %w", s.q.table, err)
	}
	want := map[string]string{ckptCol: "bigint", seqCol: "bigint"}
	for _, c := range s.cfg.Columns {
		want[c] = target[c]
	}
	if !maps.Equal(have, want) {
		if staged > 0 {
			return fmt.Errorf("postgres: staging table %s holds %d rows for other columns (%s) than the sink's (%s): drop it, or give the sink another Name",
				stage, staged, strings.Join(sortedKeys(have), ", "), strings.Join(sortedKeys(want), ", "))
		}
		if _, err := s.conn.Exec(ctx, "DROP TABLE "+stage); err != nil {
			return fmt.Errorf("postgres: dropping staging table %s: %w", stage, err)
		}
		if err := s.exec(ctx, s.q.createStage); err != nil {
			return fmt.Errorf("postgres: creating staging table %s: %w", stage, err)
		}
	}
	var seq int64
	if err := s.conn.QueryRow(ctx, s.q.maxSeq).Scan(&seq); err != nil {
		return fmt.Errorf("postgres: reading staging table %s: %w", stage, err)
	}
	s.seq = max(s.seq, seq)
	return nil
}

// exec runs a CREATE ... IF NOT EXISTS, once more if another session
// created the same at the same moment.
func (s *Sink[T]) exec(ctx context.Context, sql string) error {
	_, err := s.conn.Exec(ctx, sql)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") { // unique_violation, duplicate_table
		_, err = s.conn.Exec(ctx, sql)
	}
	return err
}

// stageRows copies rows into the staging table as checkpoint n's, after
// the rows staged before.
func (s *Sink[T]) stageRows(ctx context.Context, c *pgx.Conn, n uint64, rows []any) error {
	width := len(s.cfg.Columns)
	vals := make([]any, width+2)
	base := s.seq
	count := len(rows) / width
	src := pgx.CopyFromSlice(count, func(i int) ([]any, error) {
		vals[0], vals[1] = int64(n), base+int64(i)+1
		copy(vals[2:], rows[i*width:(i+1)*width])
		return vals, nil
	})
	if _, err := c.CopyFrom(ctx, s.q.stage, s.q.stageCols, src); err != nil {
		return err
	}
	s.seq = base + int64(count)
	return nil
}

// fence locks the sink's fence row, made if missing, and returns it.
func (s *Sink[T]) fence(ctx context.Context, tx pgx.Tx) (int64, error) {
	if _, err := tx.Exec(ctx, s.q.lockFence, s.q.name); err != nil {
		return 0, err
	}
	var f int64
	err := tx.QueryRow(ctx, s.q.readFence, s.q.name).Scan(&f)
	return f, err
}

// commitStaged upserts the rows staged for checkpoints up to n, unless
// the fence has passed n, and deletes them, in one transaction.
func (s *Sink[T]) commitStaged(ctx context.Context, c *pgx.Conn, n uint64) error {
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		f, err := s.fence(ctx, tx)
		if err != nil {
			return err
		}
		if f < int64(n) {
			if _, err := tx.Exec(ctx, s.q.upsertStaged, int64(n)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.q.setFence, s.q.name, int64(n)); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, s.q.deleteStaged, int64(n))
		return err
	})
}

// recoverStaged deletes the rows staged after checkpoint n and brings
// the fence back to n if it was past it, in one transaction.
func (s *Sink[T]) recoverStaged(ctx context.Context, c *pgx.Conn, n uint64) error {
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := s.fence(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q.rewindFence, s.q.name, int64(n)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q.dropLater, int64(n))
		return err
	})
}

// upsertRows upserts rows (the latest of each key) in one transaction,
// through the session's batch table.
func (s *Sink[T]) upsertRows(ctx context.Context, c *pgx.Conn, rows []any) error {
	width := len(s.cfg.Columns)
	vals := make([]any, width+1)
	src := pgx.CopyFromSlice(len(rows)/width, func(i int) ([]any, error) {
		vals[0] = int64(i)
		copy(vals[1:], rows[i*width:(i+1)*width])
		return vals, nil
	})
	return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, s.q.batch, s.q.batchCols, src); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q.upsertBatch)
		return err
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, strconv.Quote(k))
	}
	slices.Sort(keys)
	return keys
}
