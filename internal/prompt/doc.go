// Package prompt is the micro-batch partitioner of keyed window
// aggregations (Prompt): each epoch the senders deposit their records,
// grouped by key, in a shared round; the round splits the hottest keys
// over several reducers, assigns key fragments to reducers by load, and
// the reducers aggregate their fragments and merge the partial results
// by key at the epoch's end. In a job of several processes each process
// runs the rounds over its own senders' deposits and posts the others
// what their key groups own (docs/design.md, "Partitioning keyed
// aggregations").
package prompt
