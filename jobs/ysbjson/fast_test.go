package ysbjson

import (
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestKeyWords(t *testing.T) {
	words := []struct {
		w    uint64
		text string
	}{
		{wUserID, `user_id"`}, {wPageID, `page_id"`}, {wAdType, `ad_type"`},
		{wEventTy, `event_ty`}, {wEventTi, `event_ti`}, {wNtType, `nt_type"`},
		{wNtTime, `nt_time"`}, {wIPAddre, `ip_addre`}, {wAddress, `address"`},
	}
	for _, x := range words {
		if got := load64(x.text, 0); got != x.w {
			t.Errorf("word of %s = %#x, want %#x", x.text, x.w, got)
		}
	}
	if got := load64(`ad_id"xx`, 0) & mask6; got != wAdID {
		t.Errorf("word of ad_id = %#x, want %#x", uint64(wAdID), got)
	}
}

// firstFlagged returns the index of the lowest byte flagged in a mask
// from special or nonDigit, 8 if none is.
func firstFlagged(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

func TestSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for pos := range 8 {
		for c := range 256 {
			for range 20 {
				// Plain bytes below pos, c at pos, anything above.
				var b [8]byte
				for k := range b {
					switch {
					case k < pos:
						b[k] = byte(0x20 + r.IntN(0x60))
						for !plain[b[k]] {
							b[k] = byte(0x20 + r.IntN(0x60))
						}
					case k == pos:
						b[k] = byte(c)
					default:
						b[k] = byte(r.Uint32())
					}
				}
				got := firstFlagged(special(load64(string(b[:]), 0)))
				want := 8
				for k := range b {
					if !plain[b[k]] {
						want = k
						break
					}
				}
				if got != want {
					t.Fatalf("special(%q) flags byte %d first, want %d", b, got, want)
				}
			}
		}
	}
}

func TestPlainEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := "ab\"\\\x01\x7f\xc3\xa9 "
	for range 20000 {
		n := r.IntN(40)
		b := make([]byte, n)
		for k := range b {
			if r.IntN(8) == 0 {
				b[k] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[k] = 'a' + byte(r.IntN(26))
			}
		}
		s := string(b)
		for j := 0; j <= n; j++ {
			want := j
			for want < n && plain[s[want]] {
				want++
			}
			if got := plainEnd(s, j); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", s, j, got, want)
			}
		}
	}
}

func TestNonDigit(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for pos := range 8 {
		for c := range 256 {
			for range 20 {
				var b [8]byte
				for k := range b {
					switch {
					case k < pos:
						b[k] = '0' + byte(r.IntN(10))
					case k == pos:
						b[k] = byte(c)
					default:
						b[k] = byte(r.Uint32())
						if r.IntN(2) == 0 {
							b[k] = '0' + byte(r.IntN(10))
						}
					}
				}
				allDigits := true
				for _, x := range b {
					allDigits = allDigits && '0' <= x && x <= '9'
				}
				if got := nonDigit(load64(string(b[:]), 0)) == 0; got != allDigits {
					t.Fatalf("nonDigit(%q) == 0 is %v, want %v", b, got, allDigits)
				}
				if allDigits {
					want, _ := strconv.ParseUint(string(b[:]), 10, 64)
					if got := eightDigits(load64(string(b[:]), 0)); got != want {
						t.Fatalf("eightDigits(%q) = %d", b, got)
					}
				}
			}
		}
	}
}

func TestReadDigits(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 20000 {
		digits := strings.Repeat("0", r.IntN(3)) + strconv.FormatUint(r.Uint64()>>r.IntN(64), 10)
		if len(digits) > 18 {
			digits = digits[:r.IntN(19)]
		}
		prefix := strings.Repeat("x", r.IntN(3))
		suffix := []string{"", `"`, ",", "}", "9x", "x", `"}`, `"          `, ".5", "\xff"}[r.IntN(10)]
		s := prefix + digits + suffix
		wantEnd := len(prefix) + len(digits)
		for wantEnd < len(s) && isDigit(s[wantEnd]) {
			wantEnd++
		}
		u, end := readDigits(s, len(prefix))
		if end != wantEnd {
			t.Fatalf("readDigits(%q, %d) ends at %d, want %d", s, len(prefix), end, wantEnd)
		}
		if d := s[len(prefix):end]; len(d) <= 18 {
			want, _ := strconv.ParseUint(d, 10, 64)
			if d == "" {
				want = 0
			}
			if u != want {
				t.Fatalf("readDigits(%q, %d) = %d, want %d", s, len(prefix), u, want)
			}
		}
	}
}

// checkSameAsFull fails unless Decode and decodeFull agree on line: the
// same event, or errors with the same text.
func checkSameAsFull(t *testing.T, line string) {
	t.Helper()
	got, err := Decode(line)
	want, werr := decodeFull(line)
	if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("Decode(%q) = %+v, %v; decodeFull = %+v, %v", line, got, err, want, werr)
	}
}

// TestDecodeSameAsFull checks the one-pass decoder on the lines it is
// built for, on the cases it hands on, and on damaged lines.
func TestDecodeSameAsFull(t *testing.T) {
	lines := []string{
		validLine,
		`{` + smallFields + `,"event_time":"5"}`,
		`{` + smallFields + `,"event_time":5}`,
		`{"ad_id":"a","ad_type":"t","event_time":"5","event_type":"e","ip_address":"i","page_id":"p","user_id":"u"}`,
		" \t{ \"user_id\" : \"u\" ,\n\"page_id\":\"p\",\"ad_id\":\"a\",\"ad_type\":\"t\",\"event_type\":\"e\",\"ip_address\":\"i\",\r\"event_time\" :\t\"5\" } \r\n",
		`{ "user_id": "u", "page_id": "p", "ad_id": "a", "ad_type": "t", "event_type": "e", "ip_address": "i", "event_time": 5 }`,
		// Keys like the known ones.
		`{"user_idx":1,"user_i":2,"ad_i":3,"ad_idx":4,"ad_typ":5,"event_types":6,"event_tim":7,"event_timex":8,"ip_addresss":9,"ip_addres":0,` + smallFields + `,"event_time":"5"}`,
		`{"event_tyxx":"1","event_tixx":"2","ip_addrexx":"3",` + smallFields + `,"event_time":"5"}`,
		`{"us\u0065r_id":"x",` + smallFields + `,"event_tim\u0065":"7"}`,
		`{` + smallFields + `,"event_time":"5","ad_id":"\u00e9\"","ad_type":"a\\b"}`,
		`{` + smallFields + `,"event_time":"5","ad_id":"` + "\xff\xfe" + `"}`,
		`{` + smallFields + `,"event_time":"5","ad_id":"` + "\u00e9 long enough to need words" + `"}`,
		// Duplicates, with a type that only the last one fixes or breaks.
		`{"ad_id":7,` + smallFields + `,"event_time":"5"}`,
		`{` + smallFields + `,"event_time":"5","ad_id":7}`,
		`{` + smallFields + `,"event_time":"x","event_time":"5"}`,
		`{` + smallFields + `,"event_time":"5","event_time":null}`,
		`{` + smallFields + `,"event_time":"5","event_time":"6"}`,
		// event_time in every form.
		`{` + smallFields + `,"event_time":"0"}`,
		`{` + smallFields + `,"event_time":0}`,
		`{` + smallFields + `,"event_time":-0}`,
		`{` + smallFields + `,"event_time":"-0"}`,
		`{` + smallFields + `,"event_time":"+5"}`,
		`{` + smallFields + `,"event_time":"-5"}`,
		`{` + smallFields + `,"event_time":"05"}`,
		`{` + smallFields + `,"event_time":05}`,
		`{` + smallFields + `,"event_time":-05}`,
		`{` + smallFields + `,"event_time":-}`,
		`{` + smallFields + `,"event_time":-x}`,
		`{` + smallFields + `,"event_time":1e3}`,
		`{` + smallFields + `,"event_time":1E3}`,
		`{` + smallFields + `,"event_time":1.0}`,
		`{` + smallFields + `,"event_time":1x}`,
		`{` + smallFields + `,"event_time":true}`,
		`{` + smallFields + `,"event_time":{}}`,
		`{` + smallFields + `,"event_time":"1 "}`,
		`{` + smallFields + `,"event_time":"\u0031"}`,
		`{` + smallFields + `,"event_time":"12345678"}`,
		`{` + smallFields + `,"event_time":"1234567x"}`,
		`{` + smallFields + `,"event_time":"123456789012345678"}`,
		`{` + smallFields + `,"event_time":"999999999999999999"}`,
		`{` + smallFields + `,"event_time":"1234567890123456789"}`,
		`{` + smallFields + `,"event_time":"9223372036854775807"}`,
		`{` + smallFields + `,"event_time":"9223372036854775808"}`,
		`{` + smallFields + `,"event_time":"-9223372036854775808"}`,
		`{` + smallFields + `,"event_time":"99999999999999999999"}`,
		`{` + smallFields + `,"event_time":999999999999999999}`,
		`{` + smallFields + `,"event_time":-999999999999999999}`,
		`{` + smallFields + `,"event_time":9223372036854775807}`,
		`{` + smallFields + `,"event_time":-9223372036854775808}`,
		`{` + smallFields + `,"event_time":9223372036854775808}`,
		`{` + smallFields + `,"event_time":"5"`,
		`{` + smallFields + `,"event_time":5`,
		`{` + smallFields + `,"event_time":"5"}}`,
		`{` + smallFields + `,"event_time":"5"} {}`,
		`{` + smallFields + `,"event_time":"5",}`,
		`{` + smallFields + `,"event_time":"5" "x":1}`,
		`{"event_time":"5",` + smallFields + `}` + " \t\r\n",
		`{"event_time":5,` + smallFields + `}`,
		`{"event_time":5 ,` + smallFields + `}`,
		`{"event_time"` + "\n:\n5\n,\n" + smallFields + `}`,
		`{"x":{"a":[1,2,{"b":null}],"c":"}"},"y":[[],{}],"z":-1.5e+3,"w":true,` + smallFields + `,"event_time":"5"}`,
		`{"x":[1,]` + smallFields + `,"event_time":"5"}`,
		`{"ad_id":"a"}`,
		`{"ad_id":"a`,
		`{"ad_id"`,
		`{"ip_address":"i"}`,
		`{"ip_address"}`,
		`{}`, `{`, ``, ` `, `[]`, `"x"`, `{"a":1}`, `{"user_id":"u\`,
	}
	for _, line := range lines {
		checkSameAsFull(t, line)
	}

	// Generated events, compact and spaced, and every prefix and a
	// damaged copy of each.
	r := rand.New(rand.NewPCG(15, 16))
	damage := "\x00\x01 \t\n\"\\{}[],:0-e.x\xff"
	for range 300 {
		m := randomEvent(r)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		forms := []string{string(b), spaced(r, string(b))}
		if r.IntN(2) == 0 {
			forms = append(forms, strings.Replace(string(b), `"event_time":"`+m["event_time"]+`"`, `"event_time":`+m["event_time"], 1))
		}
		for _, line := range forms {
			got, err := Decode(line)
			if err != nil {
				t.Fatalf("Decode(%q): %v", line, err)
			}
			if want := eventOf(t, m); got != want {
				t.Fatalf("Decode(%q) = %+v, want %+v", line, got, want)
			}
			for k := range len(line) {
				checkSameAsFull(t, line[:k])
				d := []byte(line)
				d[k] = damage[r.IntN(len(damage))]
				checkSameAsFull(t, string(d))
			}
		}
	}
}

// spaced adds JSON whitespace around the structural bytes of a compact
// JSON text.
func spaced(r *rand.Rand, line string) string {
	var b strings.Builder
	ws := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\r\n"[r.IntN(4)])
		}
	}
	inString := false
	for k := 0; k < len(line); k++ {
		c := line[k]
		switch {
		case inString && c == '\\':
			b.WriteByte(c)
			k++
			b.WriteByte(line[k])
			continue
		case c == '"':
			inString = !inString
		}
		structural := !inString && strings.IndexByte("{}[],:", c) >= 0
		if structural {
			ws()
		}
		b.WriteByte(c)
		if structural {
			ws()
		}
	}
	return b.String()
}

func TestSpacedIsValid(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for range 100 {
		b, _ := json.Marshal(randomEvent(r))
		if s := spaced(r, string(b)); !json.Valid([]byte(s)) {
			t.Fatalf("spaced(%s) = %q is not valid JSON", b, s)
		}
	}
}
