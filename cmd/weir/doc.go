// Command weir runs Weir's built-in jobs and benchmarks.
//
//	weir run ysb                       # YSB on the built-in generator, live progress line
//	weir run ysb --events F --campaigns M --out O [--dead-letter D]
//	weir run wordcount --input F... --out O
//	weir bench ysb --events N --workers W [--baseline]   # one JSON object
//	weir bench ysb-json --events N --workers W           # file input vs a hand-written parser
//	weir explain ysb|wordcount
//
// Every job takes --workers (parallelism of every operator), --interval or
// --epoch-records (how epochs are cut) and --key-groups. Errors are one line
// on stderr and a non-zero exit status.
package main
