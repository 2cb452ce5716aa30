package main

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int64
		num  bool
		want string // in the error; "" for none
	}{
		{"1000000", 1_000_000, true, ""},
		{"1e6", 1_000_000, true, ""},
		{"1E6", 1_000_000, true, ""},
		{"1_000_000", 1_000_000, true, ""},
		{"1.5e6", 1_500_000, true, ""},
		{"0x10", 16, true, ""},
		{"0", 0, true, ""},
		{"0.0e-999", 0, true, ""},
		{"9223372036854775807", 1<<63 - 1, true, ""},
		{"1.5", 0, true, "--events 1.5: not a whole number of events"},
		{"2.5e-1", 0, true, "not a whole number"},
		{"1e-400", 0, true, "not a whole number"},
		{"-5", 0, true, "--events -5: a number of events must not be negative"},
		{"-1e3", 0, true, "must not be negative"},
		{"-99999999999999999999", 0, true, "must not be negative"},
		{"99999999999999999999", 0, true, "too many events"},
		{"1e30", 0, true, "too many events"},
		{"events.jsonl", 0, false, ""},
		{"NaN", 0, false, ""},
		{"Inf", 0, false, ""},
		{"1e", 0, false, ""},
		{"1__0", 0, false, ""},
		{"3/4", 0, false, ""},
		{"data/1e6", 0, false, ""},
	} {
		n, num, err := parseCount("events", c.in, "events")
		if num != c.num || n != c.n || (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseCount(%q) = %d, %v, %v; want %d, %v, an error containing %q", c.in, n, num, err, c.n, c.num, c.want)
		}
	}
}

func TestMessage(t *testing.T) {
	for in, want := range map[string]string{
		"weir: weir: count: a key changed":                "count: a key changed",
		"weir: lines#0: file: file: open x: no such file": "lines#0: file: open x: no such file",
		"--workers 0: must be at least 1":                 "--workers 0: must be at least 1",
		"ysb: a.csv:1: want the header\nsecond line":      "ysb: a.csv:1: want the header; second line",
		"x: 1: 1: y": "x: 1: 1: y",
	} {
		if got := message(errors.New(in)); got != want {
			t.Errorf("message(%q) = %q; want %q", in, got, want)
		}
	}
}
