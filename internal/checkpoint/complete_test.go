package checkpoint

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCompleteRace(t *testing.T) {
	forEachFS(t, func(t *testing.T, e *env) {
		const procs = 8
		var wg sync.WaitGroup
		results := make([]bool, procs*3)
		errs := make([]error, procs*3)
		for i := range procs {
			wg.Go(func() { // each process writes its part, then completes
				if errs[i] = e.s.WritePart(samplePart(9, i, procs, 50, 64)); errs[i] == nil {
					results[i], errs[i] = e.s.Complete(9, procs)
				}
			})
		}
		wg.Wait()
		for i := procs; i < len(results); i++ { // and bystanders race too
			wg.Go(func() { results[i], errs[i] = e.s.Complete(9, procs) })
		}
		wg.Wait()
		for i := range results {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
		}
		if !results[procs] || !slices.Contains(results[:procs], true) {
			t.Fatalf("results %v", results)
		}
		b, err := e.fs.ReadFile(e.path(9, manifestName))
		if err != nil {
			t.Fatal(err)
		}
		if m, err := DecodeManifest(b); err != nil || m.Processes != procs {
			t.Fatalf("manifest %+v, %v", m, err)
		}
		es, err := e.fs.ReadDir(e.s.chkDir(9))
		if err != nil || len(es) != 2*procs+1 {
			t.Fatalf("directory holds %v (%v), want %d parts, their indexes and a manifest", es, err, procs)
		}
		if n, ok := e.latest(t); !ok || n != 9 {
			t.Fatalf("Latest = %d, %v", n, ok)
		}
	})
}

// hookFS runs hook before CreateTemp and fails it if hook returns an error.
type hookFS struct {
	FS
	hook func(dir, pattern string) error
}

func (h hookFS) CreateTemp(dir, pattern string) (File, error) {
	if err := h.hook(dir, pattern); err != nil {
		return nil, err
	}
	return h.FS.CreateTemp(dir, pattern)
}

func TestCompleteLosesRaceOrRepairs(t *testing.T) {
	m := MemFS()
	e := newEnv(t, m, "/ckp", m)
	for i := range 2 {
		if err := e.s.WritePart(samplePart(1, i, 2, 2, 2)); err != nil {
			t.Fatal(err)
		}
	}
	// Another process writes the manifest while this one prepares its own,
	// and this one's write fails: the checkpoint is complete all the same.
	racer := hookFS{FS: m, hook: func(dir, pattern string) error {
		if strings.HasPrefix(pattern, tempPrefix+manifestName) {
			if ok, err := e.s.Complete(1, 2); !ok || err != nil {
				t.Errorf("the other Complete = %v, %v", ok, err)
			}
			return ErrInjected
		}
		return nil
	}}
	s, _ := Open(racer, "/ckp", nil)
	if ok, err := s.Complete(1, 2); !ok || err != nil {
		t.Fatalf("Complete that lost the race = %v, %v", ok, err)
	}
	// A corrupt manifest over valid parts is rewritten.
	man := e.path(1, manifestName)
	m.FlipBit(man, 3)
	if ok, err := e.s.Complete(1, 2); !ok || err != nil {
		t.Fatalf("Complete over a corrupt manifest = %v, %v", ok, err)
	}
	if !warned(e.log.String(), man, "rewriting corrupt manifest") {
		t.Fatalf("no warning in %s", e.log)
	}
	if n, ok := e.latest(t); !ok || n != 1 {
		t.Fatalf("Latest = %d, %v", n, ok)
	}
	// A manifest that cannot be written is an error.
	for i := range 2 {
		e.s.WritePart(samplePart(2, i, 2, 2, 2))
	}
	m.Fail(OpRename, 1, nil)
	if ok, err := e.s.Complete(2, 2); ok || !errors.Is(err, ErrInjected) || !strings.Contains(err.Error(), "write manifest") {
		t.Fatalf("Complete with a failing rename = %v, %v", ok, err)
	}
	m.Fail(OpReadFile, 1, nil)
	if err := e.s.WritePart(samplePart(3, 0, 1, 1, 1)); !errors.Is(err, ErrInjected) {
		t.Fatalf("WritePart with a failing read: %v", err)
	}
}
