package weir_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

type panicHandler struct{}

func (panicHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panicHandler) Handle(context.Context, slog.Record) error { panic("test logger failed") }
func (h panicHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h panicHandler) WithGroup(string) slog.Handler           { return h }

// A panic in a round's leader (here the user's Logger, called from lead
// when the elastic controller changes the task count) breaks the barrier.
// The other receivers must not return before the leader's goroutine has
// failed the job with the panic: Run must report the panic, not "weir:
// job stopping".
func TestMicroLeaderPanicIsTheError(t *testing.T) {
	bad, failed := 0, 0
	for i := range 20 {
		in := genRecs(uint64(i), 3000, 13, maxDelay)
		j := weir.NewJob("leader", weir.Workers(4), weir.Partitioning("prompt"), weir.BatchInterval(2*time.Millisecond),
			weir.Logger(slog.New(panicHandler{})))
		src := weir.Source(j, "src", slowInput[rec]{weir.SliceSource[rec]{Records: in, BatchSize: 10}, 500 * time.Microsecond})
		ws := weir.Window(weir.KeyBy(weir.EventTime(src, recTS, outOfOrder), recKey), weir.Tumbling(50*time.Millisecond))
		weir.Sink(weir.Count(ws), discard[weir.WindowResult[string, int64]]{})
		err := runWithin(t, j, time.Minute)
		if err == nil {
			continue // no task change happened
		}
		failed++
		if !strings.Contains(err.Error(), "test logger failed") {
			bad++
			t.Logf("run %d: Run = %v", i, err)
		}
	}
	if failed == 0 {
		t.Skip("the elastic controller never changed the task count (machine too loaded?): nothing to check")
	}
	if bad > 0 {
		t.Errorf("%d of 20 runs returned a secondary error instead of the leader's panic", bad)
	}
}
