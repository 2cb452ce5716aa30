// Command weir runs Weir's built-in jobs and benchmarks.
//
//	weir run ysb                       # YSB on the built-in generator, live progress line
//	weir run ysb --events F --campaigns M --out O [--dead-letter D]
//	weir run wordcount --input F|DIR|'PATTERN'|@LIST|-... --out O [--stats]
//	weir bench ysb --events N --workers W [--baseline]   # one JSON object
//	weir bench ysb-json --events N --workers W           # file input vs a hand-written parser
//	weir bench skew --s 1.5 --partitioning all --runs 5  # keyed count over skewed keys, per strategy
//	weir bench skew --simulate --partitions 64           # the planners under a cost model, no job
//	weir bench report [--from results.jsonl] [--quick]  # every suite, docs/benchmarks.md with plots
//	weir explain ysb|wordcount|fission
//	weir rescale --to N [--strategy S] ADDR  # a running job's keyed operators to N instances
//
// Every job takes --workers (parallelism of every operator), --interval or
// --epoch-records (how epochs are cut), --key-groups and --partitioning
// (auto, hash, roundrobin, pkg or prompt: how keyed aggregations partition
// each epoch). Every flag is checked before any work, and no output may
// be an input or another output. Errors are one line on stderr, starting
// "weir: ", and a non-zero exit status.
package main
