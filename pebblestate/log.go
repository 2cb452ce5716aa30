package pebblestate

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleLogger routes Pebble's log lines through the job's logger: its
// informational lines (opening, WAL recovery, compactions) at debug level,
// its errors at error level. Fatalf logs and panics: Pebble expects it not
// to return, and on an operator's goroutine the panic fails the job with
// the message rather than ending the process.
type pebbleLogger struct {
	log *slog.Logger
	dir string
}

var _ pebble.Logger = pebbleLogger{}

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug("pebble: "+l.msg(format, args), "dir", l.dir)
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error("pebble: "+l.msg(format, args), "dir", l.dir)
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	m := l.msg(format, args)
	l.log.Error("pebble: "+m, "dir", l.dir)
	panic(fmt.Sprintf("weir: pebble state %s: %s", l.dir, m))
}

func (pebbleLogger) msg(format string, args []any) string {
	return strings.TrimSuffix(fmt.Sprintf(format, args...), "\n")
}
