// Package runtime runs a physical plan: it is the one package that starts
// goroutines. It knows tasks, inboxes and epochs, not record types: batches
// travel as opaque values, and the typed operators (internal/op, internal/exchange) do
// the work inside the callbacks.
//
// A source task is driven by a loop that polls its reader and cuts the
// stream into epochs, by wall-clock interval (epoch e covers
// [start+e*interval, start+(e+1)*interval) on every instance) or by record
// count. An input task has an inbox with one bounded channel per sender
// (the bound gives backpressure) and a one-slot ready channel that senders
// poke, on which an idle task sleeps. The task reads the channels round
// robin, or in the order a SequencedTask asks for. Markers are aligned with
// a progress.Aligner: a sender that has already ended the current epoch is
// not read until every sender has, so an epoch's callbacks see exactly that
// epoch's records. Services (AddService) are the other loops a job needs,
// such as the pumps that feed inboxes from other processes. Run waits for
// them; listeners (AddListener), which may block on a peer with nothing
// more to say, are not waited for once every task has ended, unless
// they have a keep and one says to.
//
// A task instance can retire while the job goes on (Retirement: its
// process leaves the job): its last aligned marker goes on as a final
// one and it ends; outlets towards it drop the later markers (Until) and
// refuse records, and round-robin senders pass it over (Outlet.Retired).
// An instance of a process that has not joined the job is absent
// (Retirement.Absent) until its join epoch is set (Retirement.Join):
// outlets towards it drop markers until the one that ends that epoch, and
// the inboxes it sends to (SenderFrom) align without it until then. An
// instance that retired takes part again when a new process takes its
// slot (Retirement.Join with a later epoch): receivers take it back from
// then, once its final marker came, and remote outlets find it anew
// (Rejoiner) before they send it anything of that epoch. A final marker
// sent or dropped towards a receiver in another process is held by the
// runtime and sent again, as the end of the receiver's epoch, each time
// a later join epoch of that receiver is set (finals.go), so a process
// that joins after a sender ended does not wait for it. A marker from a
// sender in another process goes through Outlet.MarkRemote, which notes
// its epoch (RemoteMarked) before the outlet reads the receiver's join,
// so that a join set late for it can be told.
//
// An input task instance may be restartable (AddRestartable): it runs
// from each join epoch to its retirement with a new task that a builder
// makes for its first epoch, and its goroutine waits in between, holding
// no task; the runtime ends once no instance takes part (lives.go), or,
// while something holds it (Hold: a peer may still announce a join), once
// it is released.
//
// Every task instance has a Meter: its metrics.Instance counters (records,
// bytes, busy, idle and backpressured time, read once per batch, marker or
// wait) and, while the tracer is on, a trace.Recorder of its activities.
//
// The first error, or a panic in an operator, stops every task; Run returns
// it. Cancelling Run's context stops the sources and every task.
//
//	rt := runtime.New(runtime.Config{Interval: time.Second})
//	in := rt.NewInbox("sink", 0, 64)
//	out := in.Sender(0)
//	rt.AddSource("src", 0, src, false) // src pushes batches to out.Send
//	rt.AddTask("sink", 0, in, sink, true)
//	err := rt.Run(ctx)
package runtime
