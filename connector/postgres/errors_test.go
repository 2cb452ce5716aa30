package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/postgres"
)

// Settings that need no server are refused by the first call, with an
// error that names what is wrong.
func TestBadSettings(t *testing.T) {
	url := "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	cases := []struct {
		cfg  postgres.Config
		want string
	}{
		{postgres.Config{Table: "t", Columns: []string{"k"}, Key: []string{"k"}}, "Config.URL is empty"},
		{postgres.Config{URL: url, Columns: []string{"k"}, Key: []string{"k"}}, "Config.Table is empty"},
		{postgres.Config{URL: url, Table: "t", Key: []string{"k"}}, "t: Config.Columns is empty"},
		{postgres.Config{URL: url, Table: "t", Columns: []string{"k"}}, "t: Config.Key is empty"},
		{postgres.Config{URL: url, Table: "t", Columns: []string{"user", "n"}, Key: []string{"id"}}, `t: key column "id" is not among Config.Columns [user n]`},
		{postgres.Config{URL: url, Table: "t", Columns: []string{"k", "k"}, Key: []string{"k"}}, `column "k" is listed twice`},
		{postgres.Config{URL: url, Table: "t", Columns: []string{"k", "weir_seq"}, Key: []string{"k"}}, `column "weir_seq": the name is the staging table's own`},
		{postgres.Config{URL: url, Table: "public.", Columns: []string{"k"}, Key: []string{"k"}}, `Config.Table "public.": want a name or schema.name`},
		{postgres.Config{URL: "postgres://a:b@h:notaport/x", Table: "t", Columns: []string{"k"}, Key: []string{"k"}}, "Config.URL"},
	}
	for _, c := range cases {
		s := postgres.Upsert(c.cfg, kvRow)
		err := s.Write([]kv{{"a", 1}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Write: %v; want an error saying %q", c.cfg, err, c.want)
		}
		if err2 := s.Recover(0); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%+v: Recover: %v; want %v", c.cfg, err2, err)
		}
	}
	if err := postgres.Upsert[kv](postgres.Config{URL: url, Table: "t", Columns: []string{"k"}, Key: []string{"k"}}, nil).Close(); err == nil ||
		!strings.Contains(err.Error(), "row function") {
		t.Errorf("no row function: %v; want an error saying so", err)
	}
}

// A row function that gives the wrong number of values fails Write.
func TestRowWidth(t *testing.T) {
	s := postgres.Upsert(postgres.Config{URL: "postgres://127.0.0.1/x", Table: "t", Columns: []string{"k", "v"}, Key: []string{"k"}},
		func(x kv, dst []any) []any { return append(dst, x.K) })
	if err := s.Write([]kv{{"a", 1}}); err == nil || !strings.Contains(err.Error(), "gave 1 values for 2 columns") {
		t.Errorf("Write: %v; want an error about the row's width", err)
	}
}

// What the server says is wrong with the table is reported with the
// table's name: a job with checkpoints fails at its start, one without at
// its first epoch's end.
func TestTableErrors(t *testing.T) {
	d := newDB(t)
	nokey := d.table("weir_nokey", "k text, v bigint")
	kvt := d.table("weir_kv", kvColumns)
	missing := "weir_missing_table"
	cases := []struct {
		cfg  postgres.Config
		want string
	}{
		{postgres.Config{Table: missing, Columns: []string{"k", "v"}, Key: []string{"k"}},
			`table "weir_missing_table" does not exist in database "test" at 127.0.0.1:5432`},
		{postgres.Config{Table: kvt, Columns: []string{"k", "value"}, Key: []string{"k"}},
			`table "` + kvt + `" has no column "value" (its columns: "k", "v")`},
		{postgres.Config{Table: nokey, Columns: []string{"k", "v"}, Key: []string{"k"}},
			`table "` + nokey + `" has no primary key or unique constraint on exactly ("k")`},
		{postgres.Config{Table: kvt, Columns: []string{"k", "v"}, Key: []string{"v"}},
			`table "` + kvt + `" has no primary key or unique constraint on exactly ("v")`},
	}
	for _, c := range cases {
		c.cfg.URL = d.url
		for _, ckpt := range []bool{false, true} {
			opts := []weir.JobOption{weir.Workers(1), weir.EpochRecords(10)}
			if ckpt {
				opts = append(opts, weir.Checkpoints(t.TempDir(), 1, 1))
			}
			j := weir.NewJob("bad", opts...)
			weir.Sink(weir.Source(j, "src", weir.SliceSource[kv]{Records: []kv{{"a", 1}, {"b", 2}}}), postgres.Upsert(c.cfg, kvRow))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := j.Run(ctx)
			cancel()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, checkpoints %v: %v; want an error saying %q", c.cfg.Table, ckpt, err, c.want)
			}
		}
	}
}

// With Config.Create, a missing table is created, in the schema named.
func TestCreate(t *testing.T) {
	d := newDB(t)
	table := fmt.Sprintf("weir_created_%08x", rand.Uint32())
	d.drop(table)
	t.Cleanup(func() { d.drop(table) })
	s := postgres.Upsert(postgres.Config{URL: d.url, Table: "public." + table, Columns: []string{"k", "v"}, Key: []string{"k"}, Create: kvColumns}, kvRow)
	s.Write([]kv{{"a", 1}, {"a", 3}, {"b", 2}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := sameCounts(d.counts("SELECT k, v FROM "+table), map[string]int64{"a": 3, "b": 2}); diff != "" {
		t.Fatal(diff)
	}
}

// A server that cannot be reached is tried for Config.ConnectWait, and
// the error names its address; a refused login is reported at once.
func TestConnectErrors(t *testing.T) {
	newDB(t) // the server runs: the login below is refused by it
	cfg := postgres.Config{URL: "postgres://postgres@127.0.0.1:1/test?sslmode=disable", Table: "t", Columns: []string{"k", "v"}, Key: []string{"k"},
		ConnectWait: 500 * time.Millisecond}
	start := time.Now()
	err := postgres.Upsert(cfg, kvRow).Recover(0)
	took := time.Since(start)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "postgres: 127.0.0.1:1: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("unreachable: %v; want an error naming 127.0.0.1:1 and the refusal", err)
	}
	if took < 400*time.Millisecond || took > 3*time.Second {
		t.Errorf("unreachable: gave up after %s; want about the ConnectWait of 500ms", took)
	}

	cfg.URL, cfg.ConnectWait = "postgres://weir_no_such_role@127.0.0.1:5432/test?sslmode=disable", 10*time.Second
	start = time.Now()
	err = postgres.Upsert(cfg, kvRow).Recover(0)
	took = time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "postgres: 127.0.0.1:5432: ") || !strings.Contains(err.Error(), "weir_no_such_role") {
		t.Errorf("unknown role: %v; want an error naming the server and the role", err)
	}
	if took > 2*time.Second {
		t.Errorf("unknown role: gave up after %s; want at once", took)
	}
}
