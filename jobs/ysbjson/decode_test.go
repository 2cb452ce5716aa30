package ysbjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/gen"
)

const validLine = `{"user_id":"8d3b4b6e-1f0a-4c5e-9a57-0d6e3c1b2a90","page_id":"f1c2d3e4-5a6b-4c7d-8e9f-0a1b2c3d4e5f","ad_id":"2b9f7c1e-3d4a-4e5b-8c6d-7e8f9a0b1c2d","ad_type":"banner","event_type":"view","event_time":"1700000000123","ip_address":"10.0.0.1"}`

var validEvent = gen.YSBEvent{
	UserID:    "8d3b4b6e-1f0a-4c5e-9a57-0d6e3c1b2a90",
	PageID:    "f1c2d3e4-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
	AdID:      "2b9f7c1e-3d4a-4e5b-8c6d-7e8f9a0b1c2d",
	AdType:    "banner",
	EventType: "view",
	EventTime: 1700000000123,
	IPAddress: "10.0.0.1",
}

// small is a valid event with short values, for hand-written cases.
var small = gen.YSBEvent{UserID: "u", PageID: "p", AdID: "a", AdType: "t", EventType: "e", EventTime: 5, IPAddress: "i"}

const smallFields = `"user_id":"u","page_id":"p","ad_id":"a","ad_type":"t","event_type":"e","ip_address":"i"`

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		name string
		line string
		want gen.YSBEvent
	}{
		{"canonical", validLine, validEvent},
		{"time as number", `{` + smallFields + `,"event_time":5}`, small},
		{"any order", `{"ip_address":"i","event_time":"5","event_type":"e","ad_type":"t","ad_id":"a","page_id":"p","user_id":"u"}`, small},
		{"whitespace", " \t{ \"user_id\" : \"u\" ,\n\"page_id\":\"p\",\"ad_id\":\"a\",\"ad_type\":\"t\",\"event_type\":\"e\",\"ip_address\":\"i\",\r\"event_time\" :\t\"5\" } \r\n", small},
		{"unknown fields", `{"x":{"a":[1,2,{"b":null}],"c":"}"},"y":[[],{}],"z":-1.5e+3,"w":true,"v":false,"n":null,"s":"\"",` + smallFields + `,"event_time":"5"}`, small},
		{"duplicate key takes last", `{"ad_id":7,` + smallFields + `,"event_time":"x","event_time":"5"}`, small},
		{"escaped value", `{` + strings.Replace(smallFields, `"a"`, `"a\"b\\c\/d\u00e9\n\ud83d\ude00"`, 1) + `,"event_time":"5"}`,
			func() gen.YSBEvent { e := small; e.AdID = "a\"b\\c/dé\n😀"; return e }()},
		{"escaped key", `{"ad\u005fid":"a","user_id":"u","page_id":"p","ad_type":"t","event_type":"e","ip_address":"i","event_time":"5"}`, small},
		{"lone surrogate", `{` + strings.Replace(smallFields, `"a"`, `"\ud800x"`, 1) + `,"event_time":"5"}`,
			func() gen.YSBEvent { e := small; e.AdID = "\uFFFDx"; return e }()},
		{"invalid utf-8", "{" + strings.Replace(smallFields, `"a"`, "\"\xffa\"", 1) + `,"event_time":"5"}`,
			func() gen.YSBEvent { e := small; e.AdID = "\uFFFDa"; return e }()},
		{"negative time", `{` + smallFields + `,"event_time":"-5"}`, func() gen.YSBEvent { e := small; e.EventTime = -5; return e }()},
		{"max time", `{` + smallFields + `,"event_time":"9223372036854775807"}`, func() gen.YSBEvent { e := small; e.EventTime = 1<<63 - 1; return e }()},
		{"min time", `{` + smallFields + `,"event_time":-9223372036854775808}`, func() gen.YSBEvent { e := small; e.EventTime = -1 << 63; return e }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.line)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tt.want {
				t.Errorf("Decode = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	ok := `{` + smallFields + `,"event_time":"5"}`
	tests := []struct {
		name, line, want string
	}{
		{"empty", ``, `malformed JSON at offset 0: unexpected end of input, expected '{' to begin the event object`},
		{"not an object", `[1]`, `malformed JSON at offset 0: unexpected '[', expected '{'`},
		{"missing colon", `{"user_id" "u"}`, `malformed JSON at offset 11: unexpected '"', expected ':' after object key`},
		{"unquoted key", `{user_id:"u"}`, `offset 1: unexpected 'u', expected '"' to begin an object key`},
		{"trailing comma", `{"user_id":"u",}`, `offset 15: unexpected '}', expected '"' to begin an object key`},
		{"truncated", ok[:40], `offset 40: unexpected end of input`},
		{"unterminated string", `{"user_id":"u`, `offset 13: unexpected end of input, expected '"' to end the string`},
		{"bad escape", `{"user_id":"\x"}`, `offset 13: unexpected 'x', expected escape character`},
		{"bad unicode escape", `{"user_id":"\u12g4"}`, `offset 16: unexpected 'g', expected hexadecimal digit`},
		{"control character", "{\"user_id\":\"a\tb\"}", `offset 13: unexpected '\t', expected string character`},
		{"trailing data", ok + ` x`, `offset 107: unexpected 'x', expected end of input after the event object`},
		{"two objects", ok + ok, `expected end of input after the event object`},
		{"bad literal", `{"x":tru}`, `offset 8: unexpected '}', expected 'e' of true`},
		{"bad number", `{"x":01}`, `offset 6: unexpected '1', expected ',' or '}'`},
		{"bad fraction", `{"x":1.}`, `offset 7: unexpected '}', expected digit after decimal point`},
		{"bad nested", `{"x":[1,]}`, `offset 8: unexpected ']', expected a value`},
		{"missing field", `{"user_id":"u","page_id":"p","ad_type":"t","event_type":"e","ip_address":"i","event_time":"5"}`, `missing field "ad_id"`},
		{"empty object", `{}`, `missing field "user_id"`},
		{"time not a number", `{` + smallFields + `,"event_time":"12x"}`, `event_time "12x" is not a number`},
		{"time empty", `{` + smallFields + `,"event_time":""}`, `event_time "" is not a number`},
		{"time out of range", `{` + smallFields + `,"event_time":"9223372036854775808"}`, `event_time "9223372036854775808" is out of range`},
		{"time fraction", `{` + smallFields + `,"event_time":1.5}`, `event_time 1.5 is not an integer`},
		{"time null", `{` + smallFields + `,"event_time":null}`, `field "event_time" is null, not a string`},
		{"number for string", `{` + strings.Replace(smallFields, `"t"`, `7`, 1) + `,"event_time":"5"}`, `field "ad_type" is a number, not a string`},
		{"object for string", `{` + strings.Replace(smallFields, `"u"`, `{}`, 1) + `,"event_time":"5"}`, `field "user_id" is an object, not a string`},
		{"too deep", `{"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, `nested deeper than 10000 levels`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.line)
			if err == nil {
				t.Fatalf("Decode(%.60q) succeeded", tt.line)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode(%.60q) = %q, want it to contain %q", tt.line, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	// The object is one level, so maxDepth-1 nested arrays are accepted,
	// as by encoding/json.
	n := maxDepth - 1
	line := `{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,` + smallFields + `,"event_time":"5"}`
	if _, err := Decode(line); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !json.Valid([]byte(line)) {
		t.Fatal("encoding/json rejects the line")
	}
}

// randomEvent returns an event with fields like those of the generator,
// and now and then values that need escaping.
func randomEvent(r *rand.Rand) map[string]string {
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0x3fff|0x8000, r.Uint64()&(1<<48-1))
	}
	adTypes := []string{"banner", "modal", "sponsored-search", "mail", "mobile"}
	eventTypes := []string{"view", "click", "purchase"}
	m := map[string]string{
		"user_id":    uuid(),
		"page_id":    uuid(),
		"ad_id":      uuid(),
		"ad_type":    adTypes[r.IntN(len(adTypes))],
		"event_type": eventTypes[r.IntN(len(eventTypes))],
		"event_time": strconv.FormatInt(1700000000000+r.Int64N(1e9), 10),
		"ip_address": fmt.Sprintf("%d.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256)),
	}
	if r.IntN(4) == 0 {
		odd := []string{"a\"b", `back\slash`, "tab\there", "<html>&", "é😀", "nl\n", "\u2028", "\x01"}
		m["ad_type"] = odd[r.IntN(len(odd))]
	}
	if r.IntN(4) == 0 {
		m["extra"] = "ignored"
	}
	return m
}

func eventOf(t *testing.T, m map[string]string) gen.YSBEvent {
	t.Helper()
	ts, err := strconv.ParseInt(m["event_time"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return gen.YSBEvent{UserID: m["user_id"], PageID: m["page_id"], AdID: m["ad_id"], AdType: m["ad_type"],
		EventType: m["event_type"], EventTime: ts, IPAddress: m["ip_address"]}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		m := randomEvent(r)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(string(b))
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if want := eventOf(t, m); got != want {
			t.Fatalf("Decode(%s) = %+v, want %+v", b, got, want)
		}
	}
}

func TestDecodeAllocs(t *testing.T) {
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := Decode(validLine); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times per line, want 0", allocs)
	}
}

func TestBaselineMatchesDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var buf strings.Builder
	var want []gen.YSBEvent
	for i := range 1000 {
		m := randomEvent(r)
		if i%3 == 0 {
			// Another field order, with spacing and a nested unknown field.
			fmt.Fprintf(&buf, `{ "ip_address" : %q, "x": {"a":[1,"}",{}]}, "event_time": %s, "ad_type": %s, "event_type": %q,`+
				` "ad_id": %q, "page_id": %q, "user_id": %q }`,
				m["ip_address"], m["event_time"], mustJSON(t, m["ad_type"]), m["event_type"], m["ad_id"], m["page_id"], m["user_id"])
			buf.WriteString("\r\n")
		} else {
			buf.Write(mustJSONBytes(t, m))
			buf.WriteString("\n")
		}
		want = append(want, eventOf(t, m))
	}
	var got []gen.YSBEvent
	if err := Baseline([]byte(buf.String()), func(e *gen.YSBEvent) { got = append(got, *e) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Baseline found %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBaselineErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"truncated", validLine[:50], "unexpected end of input"},
		{"missing field", `{"user_id":"u"}`, `missing field "page_id"`},
		{"bad time", `{` + smallFields + `,"event_time":"1x"}`, `event_time "1x"`},
		{"not an object", "[]\n", "unexpected '['"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Baseline([]byte(tt.data), func(*gen.YSBEvent) {})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Baseline = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func mustJSONBytes(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t *testing.T, v any) string { return string(mustJSONBytes(t, v)) }
