package coord

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirstream/weir/internal/checkpoint"
)

// Action is what the coordinator asks its caller to do. The caller carries
// out the actions in the order Ready gives them. Three are store requests
// (WritePart, CheckComplete, CheckPart): the caller answers each with one
// event (PartWritten, CompleteChecked, PartChecked), and the coordinator
// asks nothing of the store until then. The others need no answer; if
// one fails, the run fails.
type Action interface {
	action()
	String() string
}

// WritePart asks the caller to write Part with Store.WritePart and answer
// with PartWritten. If the write fails, the caller asks
// Store.CompletedAfter(Part.Checkpoint) and says whether it returned true
// without error (Superseded).
type WritePart struct{ Part checkpoint.Part }

// CheckComplete asks the caller for Store.Complete(N, Processes) and to
// answer with CompleteChecked.
type CheckComplete struct {
	N         uint64
	Processes int
}

// CheckPart asks the caller for Store.Has(N, Process) and to answer with
// PartChecked.
type CheckPart struct {
	N       uint64
	Process int
}

// Completed says that checkpoint N is complete: the caller's hook for
// it (a stop that waits for a checkpoint checks again).
type Completed struct{ N uint64 }

// Commit asks the caller to commit the process's two-phase outputs up to
// checkpoint N, which is complete: each commits the checkpoints it
// prepared up to N, in order.
type Commit struct{ N uint64 }

// Prune asks the caller for Store.Prune(Keep).
type Prune struct{ Keep int }

// TrimIncomplete asks the caller for Store.TrimIncomplete(Keep).
type TrimIncomplete struct{ Keep int }

// WarnUnshared asks the caller to warn, once, that no checkpoint can
// complete: processes Missing said they wrote their parts of checkpoint
// Checkpoint, and the store does not hold them, so the checkpoint
// directory is not shared by the job's processes.
type WarnUnshared struct {
	Checkpoint uint64
	Missing    []int
}

func (WritePart) action()      {}
func (CheckComplete) action()  {}
func (CheckPart) action()      {}
func (Completed) action()      {}
func (Commit) action()         {}
func (Prune) action()          {}
func (TrimIncomplete) action() {}
func (WarnUnshared) action()   {}

// String renders the part with its blobs in order: state blobs as
// operator:keygroup=data, source blobs as operator#instance=data.
func (a WritePart) String() string {
	p := a.Part
	var b strings.Builder
	fmt.Fprintf(&b, "write %d epoch=%d process=%d/%d", p.Checkpoint, p.Epoch, p.Process, p.Processes)
	for _, k := range slices.Sorted(maps.Keys(p.Meta)) {
		fmt.Fprintf(&b, " %s=%s", k, p.Meta[k])
	}
	b.WriteString(" state=[")
	for i, s := range p.State {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d=%s", s.Operator, s.KeyGroup, data(s.Data))
	}
	b.WriteString("] sources=[")
	for i, s := range p.Sources {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s#%d=%s", s.Operator, s.Instance, data(s.Data))
	}
	b.WriteString("]")
	return b.String()
}

// data shows a blob's bytes as they are if they are plain, quoted if not.
func data(b []byte) string {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@._-", c) >= 0) {
			return fmt.Sprintf("%q", b)
		}
	}
	return string(b)
}

func (a CheckComplete) String() string {
	return fmt.Sprintf("check-complete %d processes=%d", a.N, a.Processes)
}
func (a CheckPart) String() string { return fmt.Sprintf("check-part %d process=%d", a.N, a.Process) }
func (a Completed) String() string { return fmt.Sprintf("completed %d", a.N) }
func (a Commit) String() string    { return fmt.Sprintf("commit %d", a.N) }
func (a Prune) String() string     { return fmt.Sprintf("prune keep=%d", a.Keep) }
func (a TrimIncomplete) String() string {
	return fmt.Sprintf("trim-incomplete keep=%d", a.Keep)
}
func (a WarnUnshared) String() string {
	return fmt.Sprintf("warn-unshared checkpoint=%d missing=%v", a.Checkpoint, a.Missing)
}
