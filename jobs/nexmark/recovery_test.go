package nexmark_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/nexmark"
)

// crashAt fails the job at the first person of id crash or more that
// comes once dir holds a complete checkpoint (never if crash is 0).
func crashAt(s weir.Stream[gen.NexmarkEvent], crash int64, dir string) weir.Stream[gen.NexmarkEvent] {
	return weir.FilterRef(s, func(e *gen.NexmarkEvent) bool {
		if crash != 0 && e.Kind == gen.PersonKind && e.Person.ID >= crash {
			if m, _ := filepath.Glob(filepath.Join(dir, "*", "MANIFEST")); len(m) > 0 {
				panic("crash")
			}
		}
		return true
	}, weir.Name("crash"), weir.Stateless())
}

// A query that fails midway (its input paced, so that checkpoints
// complete before the crash) and is restarted from its checkpoints, at
// another parallelism (so that key groups move), gives the reference's
// result: its window and process state and both sinks are restored.
func TestQueriesRestore(t *testing.T) {
	g := testGen(testEvents(t), 29)
	want := reference(t, g)
	crash := 1000 + g.Events/50/2 // a person half way
	for _, name := range []string{"q5", "q8", "q11", "q3", "q4", "q9", "q7"} {
		for _, ws := range [][2]int{{2, 1}, {1, 3}} {
			t.Run(fmt.Sprintf("%s/workers=%d-then-%d", name, ws[0], ws[1]), func(t *testing.T) {
				dir := t.TempDir()
				runOnce := func(w int, crash int64) (*weir.Job, *weir.Collect[string], *nexmark.Checksum, error) {
					j := weir.NewJob("nexmark-"+name, weir.Workers(w), weir.EpochRecords(200), weir.Checkpoints(dir, 2, 3))
					var lines weir.Collect[string]
					var sum nexmark.Checksum
					if err := nexmark.Add(name, crashAt(weir.Source(j, "events", weir.Paced[gen.NexmarkEvent](g, 20_000)), crash, dir), nexmark.Sinks{CSV: &lines, Sum: &sum}); err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					return j, &lines, &sum, j.Run(ctx)
				}
				if _, _, _, err := runOnce(ws[0], crash); err == nil {
					t.Fatal("the first run did not fail")
				}
				j, lines, sum, err := runOnce(ws[1], 0)
				if err != nil {
					t.Fatal(err)
				}
				if from := j.Metrics().RestoredFrom; from == 0 {
					t.Fatal("the second run did not restore a checkpoint")
				}
				check(t, name, lines.Records(), *sum, want[name])
			})
		}
	}
}
