package postgres_test

import (
	"context"
	"log"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/postgres"
)

type view struct {
	Page string
	TS   int64 // milliseconds
}

// Page views counted per page and minute, kept in a table that a
// dashboard reads: each window's count is upserted once its checkpoint
// completes, exactly once across crashes and restarts.
func ExampleUpsert() {
	views := []view{{"/home", 1000}, {"/cart", 2000}, {"/home", 61000}}

	j := weir.NewJob("page-views", weir.Checkpoints("/var/lib/weir/page-views", 10, 3))
	timed := weir.EventTime(weir.Source(j, "views", weir.SliceSource[view]{Records: views}),
		func(v view) int64 { return v.TS }, 5*time.Second)
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(v view) string { return v.Page }), weir.Tumbling(time.Minute)))
	weir.Sink(counts, postgres.Upsert(postgres.Config{
		URL:     "postgres://weir@127.0.0.1:5432/stats?sslmode=disable",
		Table:   "page_views",
		Create:  "page text, minute timestamptz, views bigint NOT NULL, PRIMARY KEY (page, minute)",
		Columns: []string{"page", "minute", "views"},
		Key:     []string{"page", "minute"},
	}, func(w weir.WindowResult[string, int64], dst []any) []any {
		return append(dst, w.Key, time.UnixMilli(w.Start), w.Value)
	}))
	if err := j.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}
