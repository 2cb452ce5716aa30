package trace

// Kind is what a worker is doing during an activity.
type Kind uint8

// The activity kinds. Waiting kinds are never on a critical path.
const (
	Processing      Kind = iota // an operator chain working on a batch or a marker
	Serialization               // encoding a batch for another process
	Deserialization             // decoding a batch from another process
	Send                        // handing a message to a channel (a message edge starts at its end)
	Recv                        // taking a message from a channel (a message edge ends at its start)
	WaitInput                   // waiting for input
	WaitCredit                  // waiting for output space: a full channel, or no credit
	Alignment                   // ending an epoch: aligning markers, firing windows
	CheckpointIO                // writing or reading checkpoint state
	numKinds
)

var kindNames = [numKinds]string{"processing", "serialization", "deserialization", "send", "recv",
	"wait-input", "wait-credit", "alignment", "checkpoint-io"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Waiting reports whether k is a wait, which carries no weight on a
// critical path.
func (k Kind) Waiting() bool { return k == WaitInput || k == WaitCredit }

// Event is one activity of one worker, from Start to End (Unix
// nanoseconds). Op names the operator chain a Processing, Alignment or
// CheckpointIO activity belongs to (an index into the trace's operator
// table). A Send or Recv event carries its message edge: Channel
// identifies the channel (the same on both ends) and Seq is the
// message's index on it, from 0.
type Event struct {
	Worker  uint32
	Kind    Kind
	Op      uint16
	Start   int64
	End     int64
	Channel uint64
	Seq     uint64
}

// Worker describes one worker of a trace.
type Worker struct {
	Name     string // the operator chain's name, or a pump's
	Process  int
	Instance int
	Op       uint16 // the worker's operator chain, an index into Ops
}
