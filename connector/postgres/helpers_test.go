package postgres_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirstream/weir/connector/postgres"
	"github.com/weirstream/weir/internal/services"
)

// db is a connection to the test database, with the tables a test made.
type db struct {
	t    *testing.T
	url  string
	conn *pgx.Conn
}

func newDB(t *testing.T) *db {
	t.Helper()
	url := services.Need(t, services.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &db{t: t, url: url, conn: conn}
}

// table creates a table named prefix plus a random suffix with the given
// column definitions, and drops it, its staging table and its fence row
// at the end of the test. It returns the table's name, which is also the
// sink's default name.
func (d *db) table(prefix, columns string) string {
	d.t.Helper()
	name := fmt.Sprintf("%s_%08x", prefix, rand.Uint32())
	d.exec("CREATE TABLE " + pgx.Identifier{name}.Sanitize() + " (" + columns + ")")
	d.t.Cleanup(func() { d.drop(name) })
	return name
}

// drop removes table name and what a sink named name keeps.
func (d *db) drop(name string) {
	ctx := context.Background()
	d.conn.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()+", "+pgx.Identifier{"weir_stage_" + name}.Sanitize())
	d.conn.Exec(ctx, "DELETE FROM weir_fence WHERE sink = $1", name)
}

func (d *db) exec(sql string, args ...any) {
	d.t.Helper()
	if _, err := d.conn.Exec(context.Background(), sql, args...); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
}

// counts reads a table of (text key, bigint value) rows.
func (d *db) counts(sql string) map[string]int64 {
	d.t.Helper()
	rows, _ := d.conn.Query(context.Background(), sql)
	out := map[string]int64{}
	var k string
	var v int64
	if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		out[k] = v
		return nil
	}); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// count returns a number the query gives.
func (d *db) count(sql string, args ...any) int64 {
	d.t.Helper()
	var n int64
	if err := d.conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		d.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// fence returns the checkpoint the fence row of sink name holds, -1 if
// it has none.
func (d *db) fence(name string) int64 {
	d.t.Helper()
	var n int64
	err := d.conn.QueryRow(context.Background(), "SELECT checkpoint FROM weir_fence WHERE sink = $1", name).Scan(&n)
	if err == pgx.ErrNoRows {
		return -1
	}
	if err != nil {
		d.t.Fatal(err)
	}
	return n
}

// staged returns the number of rows sink name has staged.
func (d *db) staged(name string) int64 {
	d.t.Helper()
	return d.count("SELECT count(*) FROM " + pgx.Identifier{"weir_stage_" + name}.Sanitize())
}

// kv is a row of a key-value table (k text PRIMARY KEY, v bigint).
type kv struct {
	K string
	V int64
}

func kvRow(x kv, dst []any) []any { return append(dst, x.K, x.V) }

const kvColumns = "k text PRIMARY KEY, v bigint NOT NULL"

func kvSink(url, table string) *postgres.Sink[kv] {
	return postgres.Upsert(postgres.Config{URL: url, Table: table, Columns: []string{"k", "v"}, Key: []string{"k"}}, kvRow)
}

// sameCounts reports the first difference between got and want.
func sameCounts(got, want map[string]int64) string {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			return fmt.Sprintf("%s = %d; want %d", k, got[k], want[k])
		}
	}
	var extra []string
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return "unexpected keys " + strings.Join(extra, ", ")
	}
	return ""
}

func kvSinkNamed(url, table, name string) *postgres.Sink[kv] {
	return postgres.Upsert(postgres.Config{URL: url, Table: table, Columns: []string{"k", "v"}, Key: []string{"k"}, Name: name}, kvRow)
}
