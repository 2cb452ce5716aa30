// Package kafka reads streams from Kafka topics and writes streams to
// them, with franz-go.
//
// # Source
//
// Source reads one topic. Partition p is read by instance p mod n of the
// source's n instances, in every process of a job alike, so the
// processes share the partitions without a consumer group and without
// rebalancing. A reader reads committed records only (read_committed)
// and starts at each partition's first record, its end, or the first
// record at or after a time; the offsets it starts from are resolved when
// it opens, so that its position is exact from the start.
//
// The readers implement weir.Rescalable: a position is the next offset of
// each partition the reader owns (and, for a bounded source, the offset
// each stops before), so a job restored from a checkpoint, with the same
// or another number of instances, reads each record once. Partitions
// added to the topic while the job runs are found every Discover period
// and read from their first record. The source reports kafka_lag (the
// records of this process's partitions after its readers' positions, as
// of their last fetches) among the job's counters, and the readers
// report their backlog, so a job that sizes itself sizes for the rate
// records arrive at.
//
// With SourceConfig.Group the readers also commit their positions as
// that consumer group's offsets (weir.Acknowledged): in a job with
// checkpoints once a checkpoint holding them is complete, and at the end
// of a job that finished; without checkpoints at every epoch's end. So
// Kafka's tools show how far the job got, and StartCommitted starts a
// new job there (a restored job starts from its checkpoint). The group
// assigns nothing: the readers still own partitions by p mod n.
//
// A bounded source (SourceConfig.Bounded) stops each partition at the
// last stable offset it had when the reader opened, as Flink's bounded
// Kafka source does, so a backfill or a test ends by itself.
//
// A record the decoder rejects fails the job with an error that names
// its topic, partition and offset, unless the source has a dead-letter
// output (connector/file's DeadLetter): then it goes there, counted, with
// "split" topic/partition and its offset, once across restarts.
//
// # Sink
//
// Sink writes each record as one message. In a job with checkpoints it is
// exactly-once through Kafka transactions (it implements weir.TwoPhase):
//
//   - the records written between two checkpoints go in one transaction
//     of one of its transactional writers (ids prefix-0, prefix-1, ...:
//     three, and more while checkpoints complete late);
//   - at checkpoint n the transaction is flushed and sealed, and its id,
//     producer id and epoch are saved in the checkpoint; writing goes on
//     in the next writer's transaction;
//   - once checkpoint n is complete, its transaction commits;
//   - a job restarted from checkpoint n first commits the transaction
//     that checkpoint saved, by its producer id and epoch, in case the
//     crash came between the checkpoint and its commit, and then starts
//     its writers, which aborts what the earlier run wrote after n (it
//     starts ids in order up to the first one the brokers did not know).
//
// A read_committed consumer thus sees each record once. A transaction
// sealed by a complete checkpoint must be committed before the brokers'
// transaction timeout (SinkConfig.TransactionTimeout) runs out: a job
// that restarts later finds it aborted and reports that those records
// are lost. Without checkpoints, or with AtLeastOnce, the sink writes
// with the idempotent producer and flushes at the end of every epoch.
//
// A missing topic is an error, or is made when SinkConfig.Create is set.
// Brokers that cannot be reached are retried with backoff for
// Config.Connect, then reported by address.
//
// ParseURI reads the kafka://host:port/topic form the weir command takes.
package kafka
