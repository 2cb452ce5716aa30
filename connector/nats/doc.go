// Package nats reads streams from NATS JetStream and writes streams to
// it.
//
// # Sources
//
// Source reads the messages of one JetStream stream, optionally only
// those on a subject filter, and decodes each message's payload. A
// stream is one ordered log, so one reader reads it all: instance 0 of
// the source reads the whole stream, in stream order; the other
// instances of a source with several read nothing and end at once (Read
// returns io.EOF). Parallelism thus belongs downstream of the source,
// after a KeyBy or a Map with Parallelism.
//
// The reader reads through a durable pull consumer of its own, named
// after the source (SourceConfig.Consumer, default weir-JOB-SOURCE) and a
// token of the reader's (BASE-TOKEN, the token a NUID), made when it
// starts so that it delivers from the reader's position on; the
// consumers earlier readers of the source left are deleted then. It
// acknowledges what the job no longer needs (weir.Acknowledged): in a job
// with checkpoints, the messages before the position a complete
// checkpoint holds, and at the end of a job that ran to its end in every
// process, all it read; without checkpoints, what it passed on by each
// epoch's end. So a work-queue stream (explicit acks, one per message)
// and an interest stream (AckAll) let go of messages only once a restart
// would no longer read them, and a limits stream's consumer shows how far
// the job got. The server delivers a message not acknowledged within 30
// minutes again; the reader skips what comes before its position.
//
// A work-queue stream is read from its first message left (it takes no
// start time), and its old consumers go before the new one is made (the
// stream keeps the messages meanwhile). On an interest stream the new
// consumer is made first, so that the messages stay, and it starts at
// the old ones' first message not acknowledged, if earlier, to
// acknowledge those too. A reader whose consumer a later reader of its
// source deleted (two runs of one job at once) fails, naming the
// consumer; its acknowledgements, whose reply subjects name its own
// consumer, touch no other. Renaming a job or a source leaves the old
// consumers on the server (on an interest stream they keep its messages):
// delete them.
//
// SourceConfig.Ordered reads through an ordered consumer instead (an
// ephemeral consumer without acks, which the client recreates from where
// it was if it misses a message, and the server drops a minute after its
// reader stops): for a stream with limits retention read by many jobs; a
// stream that needs
// acknowledgements is refused.
//
// Reading starts at the stream's first message, at the first message
// stored at or after SourceConfig.StartAt, or after the last message
// (SourceConfig.New), and waits for new messages forever, unless
// SourceConfig.Bounded: then the input ends after the last message the
// stream held (on the subject filter) when the reader opened, as a
// backfill or a test should. A Read with nothing to return returns an
// empty batch after waiting a few milliseconds.
//
// A message the decoder rejects fails the job with an error that names
// the stream and the message's sequence:
//
//	nats: stream ORDERS sequence 17 (subject orders.new): unexpected end of JSON input
//
// unless SourceConfig.DeadLetter is set: then the message goes there, as
// a file.Letter whose Split is the stream and whose Offset is the
// sequence, and the reader goes on; the source counts the letters
// (dead_letters in the job's counters). A missing stream, a bad URL or a
// server that cannot be reached (the reader tries for 10 s) fails Open:
//
//	nats: stream ORDERS not found at nats://127.0.0.1:4222
//
// # Exactly once
//
// The readers implement weir.Seekable and weir.Rescalable: the reading
// instance's position is the stream sequence it reads next, with the
// stream's name, so that a checkpoint holds where reading stands and a
// job restored from it reads the stream again from there: the messages
// after the newest complete checkpoint are never acknowledged, so a
// work-queue or interest stream still holds them (a limits stream must
// keep them by its limits). A job restored from an older checkpoint
// than the newest (weir.FromCheckpoint) cannot read again what newer
// ones acknowledged on such a stream. A position of another stream is
// refused.
// Restored with another parallelism, instance 0 resumes where the old
// instance 0 stood. With an OpenDeadLetter output the letters are
// exactly-once too, by (source, stream, sequence).
//
// Sink publishes each record to a stream, on SinkConfig.Subject, with a
// message id (Nats-Msg-Id): by default a hash of the record's bytes, or
// SinkConfig.ID. The server stores a message once per id within the
// stream's duplicate window (2 minutes for a stream the sink creates,
// the server's default otherwise), so the records a job restored from a
// checkpoint publishes again are dropped as duplicates, provided the
// restart comes within the window. Records of equal bytes are one
// message under the default id: give an ID that tells them apart when
// they are distinct results. The sink publishes without waiting, and
// waits for the server's acks at the end of each epoch and at Close; a
// publication the server refuses fails the job. Several instances of the
// sink share one connection and may publish in any order between them.
//
// # Usage
//
//	src := nats.Source(nats.SourceConfig{URL: "nats://127.0.0.1:4222", Stream: "ORDERS", Bounded: true}, decodeOrder)
//	orders := weir.Source(job, "orders", src)
//	...
//	weir.Sink(totals, nats.Sink(nats.SinkConfig{URL: "nats://127.0.0.1:4222", Stream: "TOTALS", Create: true},
//		func(t Total, dst []byte) []byte { return fmt.Appendf(dst, "%s,%d", t.Key, t.Count) }))
package nats
