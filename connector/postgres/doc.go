// Package postgres writes streams into PostgreSQL tables.
//
// Upsert returns an output that turns each record into a row of a table
// with a primary key or unique constraint: a row whose key the table
// holds replaces that row (INSERT ... ON CONFLICT (key) DO UPDATE sets
// every other column), others are added. It suits results that are
// rewritten as they change, such as per-key counts or window results
// keyed by key and window.
//
// # Exactly once, with checkpoints
//
// In a job with checkpoints the sink implements weir.TwoPhase with two
// tables of its own, in the target table's schema:
//
//	weir_stage_<name>  the rows staged: the columns of Config.Columns,
//	                   with the target's types, and two of its own,
//	                   weir_checkpoint (the checkpoint that sealed the
//	                   row) and weir_seq (its order of arrival)
//	weir_fence         one row per sink: (sink, checkpoint), the last
//	                   checkpoint whose rows are in the target table
//
// where name is Config.Name, by default the table's name. Write keeps
// rows in memory. Prepare(n) copies the rows written since the last
// Prepare into the staging table, tagged n, in one COPY: durable, but not
// in the target yet. Commit(n), once checkpoint n is complete, runs one
// transaction that locks the sink's fence row; if the fence is below n,
// it upserts the latest staged row of each key among the checkpoints up
// to n (the highest checkpoint, then the latest arrival) and moves the
// fence to n; either way it deletes those staged rows. Commit is thus
// idempotent: the engine calls it again after a restart, and a repeated
// or older commit changes nothing. Recover(n), before a job restarted
// from checkpoint n writes anything, deletes the rows staged after n and
// brings the fence back to n if it was past it, so that the rows the job
// writes again after n are the ones that reach the table. Close, at the
// end of a job that finished, stages what is left and commits everything
// staged.
//
// While the job runs, the target table thus changes only by whole
// checkpoints, and after a crash and restart from the latest checkpoint
// it ends as a failure-free run leaves it, whatever the epochs of the run
// after the restart. A job started from a checkpoint older than the last
// committed (weir.FromCheckpoint) rewrites the rows after it, but the
// rows that the later checkpoints wrote stay in the table until then: an
// upsert cannot take a row back.
//
// With checkpoints the sink runs as one instance, as the engine requires
// of exactly-once outputs. Two sinks writing one table need two names;
// sinks of different jobs with the same name would share a fence.
//
// # At least once, without checkpoints
//
// Without checkpoints, EndEpoch upserts the rows written since the last
// epoch's end in one transaction (through a temporary table of the
// session, with COPY), and Close the rest. A job that fails may have
// upserted some epochs; run again, it upserts them again, which leaves
// the rows of a deterministic job as they would be. Several instances of
// the sink (weir.Parallelism) share one buffer and one connection: rows
// of one key written by different instances reach the table in the order
// the instances wrote them.
//
// Within one transaction, several rows with one key reduce to the last
// written, since one statement cannot update a row twice.
//
// # Settings and errors
//
// The sink connects when it first needs the server (Recover, at the
// start of a job with checkpoints; the first EndEpoch without) and checks
// the table: that it exists (or creates it from Config.Create), has every
// column of Config.Columns, and has a primary key or unique constraint on
// exactly Config.Key. The errors name what is wrong:
//
//	postgres: table "counts" does not exist in database "test" at 127.0.0.1:5432
//	postgres: counts: key column "id" is not among Config.Columns [user n]
//	postgres: 127.0.0.1:5433: failed to connect to `user=postgres database=test`: ... connection refused (8 attempts in 10s)
//
// A server that cannot be reached is tried again with growing pauses for
// Config.ConnectWait (10 s by default); a refused login is reported at
// once. A connection lost between steps is opened again, and the step run
// once more: every step may run twice without harm.
//
// Row values are encoded by pgx for the column's type (int64 for bigint,
// string for text, time.Time for timestamptz, and so on); a []byte value
// is copied by Write, other values are kept as the row function gave
// them until the rows are sent.
package postgres
