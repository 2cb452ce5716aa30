package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir"
)

// progressBar draws, on a terminal, a bar of a run's progress toward a
// known number of records, once the run has taken a second: for long
// benchmark runs. On anything but a terminal it stays silent.
type progressBar struct {
	w     *os.File
	tty   bool
	mu    sync.Mutex
	label string
	total int64
	began time.Time
	drawn bool
}

func newProgressBar(w *os.File) *progressBar {
	return &progressBar{w: w, tty: newProgress(w).tty}
}

// begin starts a run of total records.
func (b *progressBar) begin(label string, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.label, b.total, b.began = label, max(total, 1), time.Now()
}

// epoch implements weir.OnEpoch's callback.
func (b *progressBar) epoch(st weir.EpochStats) {
	if !b.tty {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	took := time.Since(b.began)
	if took < time.Second || st.Final {
		return
	}
	const width = 30
	frac := min(1, float64(st.Records)/float64(b.total))
	full := int(frac * width)
	fmt.Fprintf(b.w, "\r\033[K%s [%s%s] %3.0f%%  %d of %d events  %.0f events/s",
		b.label, strings.Repeat("#", full), strings.Repeat("-", width-full), 100*frac,
		st.Records, b.total, float64(st.Records)/took.Seconds())
	b.drawn = true
}

// end clears the bar of a finished run.
func (b *progressBar) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
	b.drawn = false
}
