package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLocked is what Lock's error matches when another job holds the
// directory.
var ErrLocked = errors.New("checkpoint: directory in use")

// DirLock is a process's hold on a checkpoint directory. The operating
// system releases it when its holder exits, however it exits.
type DirLock struct{ f *os.File }

// Lock takes process's lock of the checkpoint directory dir (created if
// needed), which says that a running job writes there as that process.
// holder describes the job, for the error another job gets. If the lock
// is held, the error matches ErrLocked and quotes the holder's
// description.
func Lock(dir string, process int, holder string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("LOCK-%04d", process))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: lock %s: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: lock %s: %w", path, err)
	}
	if held {
		b, _ := os.ReadFile(path)
		f.Close()
		who := strings.TrimSpace(string(b))
		if who == "" {
			who = "another job"
		}
		return nil, fmt.Errorf("%w: %s is held by %s", ErrLocked, path, who)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Release gives the lock up.
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the lock
	l.f = nil
	return err
}
