package file

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weirstream/weir"
)

// Parts is an exactly-once text output for jobs with checkpoints: it
// writes each record as a line (format appends it, without the newline)
// into part files in dir, which become visible only when the checkpoint
// that covers them completes (it implements weir.TwoPhase):
//
//	dir/.open               what is being written now
//	dir/.pending-N          sealed at checkpoint N, not yet visible
//	dir/part-N              visible: checkpoint N is complete
//	dir/part-final          the rest, once the job has finished
//
// After any crash and restart from a checkpoint, the visible parts hold
// exactly what a failure-free run's would (in epoch order; the order of
// records within one part follows arrival). ReadParts reads them back.
// Without checkpoints, everything becomes part-final at the end. A Parts
// output runs as one instance (the default for a sink).
func Parts[T any](dir string, format func(b []byte, v T) []byte) *PartsOutput[T] {
	return &PartsOutput[T]{dir: dir, format: format}
}

// PartsOutput is the output Parts returns.
type PartsOutput[T any] struct {
	dir    string
	format func([]byte, T) []byte
	mu     sync.Mutex
	f      *os.File
	bw     *bufio.Writer
	buf    []byte
}

var (
	_ weir.TwoPhase  = (*PartsOutput[int])(nil)
	_ weir.EpochSink = (*PartsOutput[int])(nil)
)

const (
	openName    = ".open"
	pendingName = ".pending-"
	partName    = "part-"
	finalName   = "part-final"
)

func partFile(n uint64) string { return fmt.Sprintf("%s%020d", partName, n) }

func (p *PartsOutput[T]) open() error {
	if p.f != nil {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(p.dir, openName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("file: %w", err)
	}
	p.f, p.bw = f, bufio.NewWriterSize(f, 1<<16)
	return nil
}

// Write implements weir.Output.
func (p *PartsOutput[T]) Write(batch []T) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.open(); err != nil {
		return err
	}
	for _, v := range batch {
		p.buf = append(p.format(p.buf[:0], v), '\n')
		if _, err := p.bw.Write(p.buf); err != nil {
			return fmt.Errorf("file: %s: %w", p.dir, err)
		}
	}
	return nil
}

// EndEpoch implements weir.EpochSink: it writes the epoch's lines to the
// open part (not yet visible).
func (p *PartsOutput[T]) EndEpoch(uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bw == nil {
		return nil
	}
	if err := p.bw.Flush(); err != nil {
		return fmt.Errorf("file: %s: %w", p.dir, err)
	}
	return nil
}

// seal makes the open file durable under name, and starts a new one.
func (p *PartsOutput[T]) seal(name string) error {
	if err := p.open(); err != nil {
		return err
	}
	err := p.bw.Flush()
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	p.f, p.bw = nil, nil
	if err == nil {
		err = os.Rename(filepath.Join(p.dir, openName), filepath.Join(p.dir, name))
	}
	if err == nil {
		err = syncDir(p.dir)
	}
	if err != nil {
		return fmt.Errorf("file: %s: %w", p.dir, err)
	}
	return nil
}

// Prepare implements weir.TwoPhase: the lines written since the last
// checkpoint become pending part N.
func (p *PartsOutput[T]) Prepare(n uint64) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return nil, p.seal(pendingName + strconv.FormatUint(n, 10))
}

// Commit implements weir.TwoPhase: pending parts up to N become visible.
func (p *PartsOutput[T]) Commit(n uint64, _ []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commit(func(m uint64) bool { return m <= n })
}

// commit makes the pending parts whose number passes ok visible.
func (p *PartsOutput[T]) commit(ok func(uint64) bool) error {
	pending, err := p.pending()
	if err != nil {
		return err
	}
	for _, m := range pending {
		if !ok(m) {
			continue
		}
		if err := os.Rename(filepath.Join(p.dir, pendingName+strconv.FormatUint(m, 10)), filepath.Join(p.dir, partFile(m))); err != nil {
			return fmt.Errorf("file: %w", err)
		}
	}
	return syncDir(p.dir)
}

// Recover implements weir.TwoPhase: lines written after checkpoint N,
// sealed or not, are discarded, and parts sealed up to N become visible.
func (p *PartsOutput[T]) Recover(n uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil {
		p.f.Close()
		p.f, p.bw = nil, nil
	}
	if err := os.Remove(filepath.Join(p.dir, openName)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("file: %w", err)
	}
	pending, err := p.pending()
	if err != nil {
		return err
	}
	for _, m := range pending {
		if m > n {
			if err := os.Remove(filepath.Join(p.dir, pendingName+strconv.FormatUint(m, 10))); err != nil {
				return fmt.Errorf("file: %w", err)
			}
		}
	}
	// A restart from an older checkpoint takes back what came after it.
	ents, err := os.ReadDir(p.dir)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("file: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		s, ok := strings.CutPrefix(name, partName)
		m, perr := strconv.ParseUint(s, 10, 64)
		if ok && (name == finalName || perr == nil && m > n) {
			if err := os.Remove(filepath.Join(p.dir, name)); err != nil {
				return fmt.Errorf("file: %w", err)
			}
		}
	}
	return p.commit(func(m uint64) bool { return m <= n })
}

// Close implements weir.Output: the job has finished, so everything
// becomes visible.
func (p *PartsOutput[T]) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.seal(finalName); err != nil {
		return err
	}
	return p.commit(func(uint64) bool { return true })
}

// pending lists the numbers of the pending parts, ascending.
func (p *PartsOutput[T]) pending() ([]uint64, error) {
	ents, err := os.ReadDir(p.dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	var ns []uint64
	for _, e := range ents {
		if s, ok := strings.CutPrefix(e.Name(), pendingName); ok {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				ns = append(ns, n)
			}
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// ReadParts returns the visible parts of a Parts output's directory,
// concatenated in order.
func ReadParts(dir string) ([]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	var out []byte
	for _, e := range ents { // ReadDir sorts by name: part-N in order, then part-final
		if strings.HasPrefix(e.Name(), partName) {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("file: %w", err)
			}
			out = append(out, b...)
		}
	}
	return out, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !os.IsPermission(err) {
		return err
	}
	return nil
}
