package ysbjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func FuzzDecode(f *testing.F) {
	seeds := []string{
		validLine,
		`{` + smallFields + `,"event_time":5}`,
		`{` + smallFields + `,"event_time":"5","x":{"a":[1,2.5e-3,true,false,null,"s"]}}`,
		`{` + strings.Replace(smallFields, `"a"`, `"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"`, 1) + `,"event_time":"5"}`,
		`{"ad\u005fid":"a",` + smallFields + `,"event_time":"-0"}`,
		" { \"user_id\" : \"u\" } ",
		`{` + smallFields + `,"event_time":"12x"}`,
		`{` + smallFields + `,"event_time":1.5}`,
		`{` + smallFields + `,"event_time":"99999999999999999999"}`,
		validLine[:60],
		validLine + "x",
		`{"user_id":"u",}`,
		`{"user_id" "u"}`,
		`{"x":[1,]}`,
		`{"x":01}`,
		"{\"user_id\":\"\xff\xfe\"}",
		`{"user_id":"\ud800\udc00\ud800"}`,
		`[]`,
		`null`,
		``,
		" { \"user_id\" : \"u\" ,\n\"page_id\":\"p\",\"ad_id\":\"a\",\"ad_type\":\"t\",\"event_type\":\"e\",\"ip_address\":\"i\",\"event_time\" : 5 } ",
		`{"event_time":-123456789012345678,` + smallFields + `}`,
		`{"event_time":"123456789012345678",` + smallFields + `}`,
		`{"event_time":05,` + smallFields + `}`,
		`{"event_time":1e3,` + smallFields + `}`,
		`{"ad_id":7,` + smallFields + `,"event_time":"5"}`,
		`{"user_idx":1,"event_types":2,"ad_i":3,` + smallFields + `,"event_time":"5"}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := Decode(line)
		// The one-pass decoder agrees with the general one, errors included.
		if fev, ferr := decodeFull(line); ev != fev || (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
			t.Fatalf("Decode(%q) = %+v, %v; decodeFull = %+v, %v", line, ev, err, fev, ferr)
		}
		if !json.Valid([]byte(line)) {
			if err == nil {
				t.Fatalf("Decode accepted invalid JSON %q: %+v", line, ev)
			}
			return
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var v any
		if jerr := d.Decode(&v); jerr != nil {
			t.Fatalf("encoding/json: valid JSON %q does not decode: %v", line, jerr)
		}
		m, isObject := v.(map[string]any)
		want := map[string]string{}
		allStrings := isObject
		for _, name := range fieldNames {
			switch x := m[name].(type) {
			case string:
				want[name] = x
			case json.Number:
				if name != "event_time" {
					allStrings = false
				}
				want[name] = string(x)
			default:
				allStrings = false
			}
		}
		wantTime, terr := strconv.ParseInt(want["event_time"], 10, 64)
		if !allStrings || terr != nil {
			if err == nil {
				t.Fatalf("Decode(%q) = %+v, but encoding/json finds %v", line, ev, v)
			}
			return
		}
		if err != nil {
			t.Fatalf("Decode(%q): %v; encoding/json finds %v", line, err, v)
		}
		got := map[string]string{
			"user_id": ev.UserID, "page_id": ev.PageID, "ad_id": ev.AdID, "ad_type": ev.AdType,
			"event_type": ev.EventType, "ip_address": ev.IPAddress,
		}
		for name, g := range got {
			if g != want[name] {
				t.Errorf("Decode(%q): %s = %q, encoding/json finds %q", line, name, g, want[name])
			}
		}
		if ev.EventTime != wantTime {
			t.Errorf("Decode(%q): event_time = %d, encoding/json finds %q", line, ev.EventTime, want["event_time"])
		}
	})
}
