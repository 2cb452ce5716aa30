// Package ysbjson decodes the ad events of the Yahoo Streaming Benchmark
// from their JSON form, one object per line:
//
//	{"user_id":"…","page_id":"…","ad_id":"…","ad_type":"banner","event_type":"view","event_time":"1700000000123","ip_address":"1.2.3.4"}
//
// Decode is a hand-written parser for one such line. It uses no
// reflection and does not allocate for a line without escapes: the string
// fields of the event are substrings of the line. It accepts the fields in
// any order with any whitespace, skips unknown fields of any type, keeps the
// last value of a duplicated key, and accepts event_time (milliseconds since
// the Unix epoch) as a decimal string or a JSON number. It rejects every
// line that encoding/json rejects as malformed JSON, and its errors say what
// is wrong and where:
//
//	malformed JSON at offset 17: unexpected 'x', expected ':' after object key
//	missing field "ad_id"
//	event_time "12x" is not a number
//	field "ad_type" is a number, not a string
//
// The errors carry no location beyond the byte offset, so that a reader can
// prefix the file and line.
//
// Baseline walks a whole in-memory JSON-lines buffer on one goroutine. It
// is the reference the engine's parallel file input is compared against.
package ysbjson
