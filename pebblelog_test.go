package weir_test

import (
	"bytes"
	"log"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// Pebble's log lines go through the job's logger, at debug level, and
// nothing reaches the standard library's log.
func TestPebbleLogsThroughJobLogger(t *testing.T) {
	var std bytes.Buffer
	old := log.Writer()
	log.SetOutput(&std)
	defer log.SetOutput(old)
	var got bytes.Buffer
	l := slog.New(slog.NewTextHandler(&got, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := filepath.Join(t.TempDir(), "state")
	j, out := wordJob([]weir.JobOption{pebblestate.Dir(dir), weir.Logger(l), weir.Workers(1)})
	if err := runRecovered(t, j); err != nil {
		t.Fatal(err)
	}
	if len(out.Records()) != 3 {
		t.Errorf("%d results; want 3", len(out.Records()))
	}
	if std.Len() > 0 {
		t.Errorf("the standard logger received %q", std.String())
	}
	if !strings.Contains(got.String(), "level=DEBUG msg=\"pebble: ") || strings.Contains(got.String(), "level=INFO msg=\"pebble") {
		t.Errorf("the job's logger received no debug line from Pebble, or an info line:\n%s", got.String())
	}
}
