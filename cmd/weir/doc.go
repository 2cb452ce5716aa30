// Command weir runs Weir's built-in jobs and benchmarks.
//
//	weir run ysb                       # YSB on the built-in generator, live progress line
//	weir run ysb --events F --campaigns M --out O [--dead-letter D]
//	weir run wordcount --input F... --out O [--stats]
//	weir bench ysb --events N --workers W [--baseline]   # one JSON object
//	weir bench ysb-json --events N --workers W           # file input vs a hand-written parser
//	weir bench skew --s 1.5 --partitioning all --runs 5  # keyed count over skewed keys, per strategy
//	weir bench skew --simulate --partitions 64           # the planners under a cost model, no job
//	weir explain ysb|wordcount
//
// Every job takes --workers (parallelism of every operator), --interval or
// --epoch-records (how epochs are cut), --key-groups and --partitioning
// (auto, hash, roundrobin, pkg or prompt: how keyed aggregations partition
// each epoch). Errors are one line on stderr and a non-zero exit status.
package main
