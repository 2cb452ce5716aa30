package nexmark

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
)

// jsonEvents generates the events of g in order.
func jsonEvents(t testing.TB, g gen.Nexmark) []gen.NexmarkEvent {
	t.Helper()
	r, err := g.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []gen.NexmarkEvent
	for {
		evs, err := r.Read()
		out = append(out, evs...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Generated events survive encoding and decoding unchanged, and
// encoding/json reads the same fields from the lines.
func TestJSONRoundTrip(t *testing.T) {
	for _, g := range []gen.Nexmark{
		{Events: 20_000, Seed: 1, StartTime: 1_700_000_000_000},
		{Events: 5_000, Seed: 7, StartTime: 1, EventTimeRate: 100},
		{Events: 1_000, Seed: 3, StartTime: -1_000_000, EventTimeRate: 1e9},
	} {
		evs := jsonEvents(t, g)
		var kinds [3]int
		var line []byte
		for i := range evs {
			kinds[evs[i].Kind]++
			line = AppendJSON(line[:0], &evs[i])
			got, err := DecodeJSON(string(line))
			if err != nil {
				t.Fatalf("DecodeJSON(%s): %v", line, err)
			}
			if got != evs[i] {
				t.Fatalf("DecodeJSON(AppendJSON(%+v)) = %+v", evs[i], got)
			}
			if i%97 == 0 {
				checkEncodingJSON(t, line, &evs[i])
			}
		}
		if kinds[0] == 0 || kinds[1] == 0 || kinds[2] == 0 {
			t.Errorf("%+v: events of each kind: %v", g, kinds)
		}
	}
}

// checkEncodingJSON checks that encoding/json reads e's fields from line.
func checkEncodingJSON(t *testing.T, line []byte, e *gen.NexmarkEvent) {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("encoding/json: %s: %v", line, err)
	}
	want := map[string]any{"kind": e.Kind.String()}
	num := func(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }
	switch p, a, b := e.Person, e.Auction, e.Bid; e.Kind {
	case gen.PersonKind:
		for k, v := range map[string]any{"id": num(p.ID), "name": p.Name, "emailAddress": p.Email, "creditCard": p.CreditCard,
			"city": p.City, "state": p.State, "dateTime": num(p.DateTime), "extra": p.Extra} {
			want[k] = v
		}
	case gen.AuctionKind:
		for k, v := range map[string]any{"id": num(a.ID), "itemName": a.ItemName, "description": a.Description,
			"initialBid": num(a.InitialBid), "reserve": num(a.Reserve), "dateTime": num(a.DateTime), "expires": num(a.Expires),
			"seller": num(a.Seller), "category": num(a.Category), "extra": a.Extra} {
			want[k] = v
		}
	default:
		for k, v := range map[string]any{"auction": num(b.Auction), "bidder": num(b.Bidder), "price": num(b.Price),
			"channel": b.Channel, "url": b.URL, "dateTime": num(b.DateTime), "extra": b.Extra} {
			want[k] = v
		}
	}
	if len(m) != len(want) {
		t.Errorf("%s: %d fields, want %d", line, len(m), len(want))
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: %s = %#v, want %#v", line, k, m[k], v)
		}
	}
}

// Strings that need escapes, and invalid UTF-8, are written as JSON
// requires: encoding/json reads them back, and so does DecodeJSON.
func TestJSONEscapes(t *testing.T) {
	for _, s := range []string{
		"", `"`, `\`, "a\"b\\c", "\n\r\t\b\f\x00\x01\x1f\x7f", "é😀€", "<&>", "\u2028\u2029", "\xff", "a\xc3", "\xed\xa0\x80",
		strings.Repeat("x\"", 100),
	} {
		e := gen.NexmarkEvent{Kind: gen.BidKind, Bid: gen.Bid{Auction: 1, Bidder: 2, Price: 3, Channel: s, URL: "u" + s, Extra: s + "e"}}
		line := AppendJSON(nil, &e)
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("AppendJSON with %q: %s is not JSON: %v", s, line, err)
		}
		want := string([]rune(s)) // each byte of invalid UTF-8 becomes U+FFFD
		got, err := DecodeJSON(string(line))
		if err != nil {
			t.Fatalf("DecodeJSON(%s): %v", line, err)
		}
		if got.Bid.Channel != want || got.Bid.URL != "u"+want || got.Bid.Extra != want+"e" || m["channel"] != want {
			t.Errorf("%q: decoded %q, encoding/json %q; want %q", s, got.Bid.Channel, m["channel"], want)
		}
	}
}

func TestJSONUnknownKind(t *testing.T) {
	e := gen.NexmarkEvent{Kind: 9}
	line := string(AppendJSON(nil, &e))
	if _, err := DecodeJSON(line); err == nil || !strings.Contains(err.Error(), `kind "NexmarkKind(9)"`) {
		t.Errorf("DecodeJSON(%s) = %v; want an error naming the kind", line, err)
	}
}

// WriteJSON writes the generator's events, one line each.
func TestWriteJSON(t *testing.T) {
	g := gen.Nexmark{Events: 3_000, Seed: 5, StartTime: 1_000, EventTimeRate: 1_000}
	var b bytes.Buffer
	c, err := WriteJSON(&b, g)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonEvents(t, g)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(want) || c.Total() != int64(len(want)) || c.Persons != 60 || c.Auctions != 180 {
		t.Fatalf("%d lines, counts %+v; want %d events, 60 persons, 180 auctions", len(lines), c, len(want))
	}
	for i, l := range lines {
		if got, err := DecodeJSON(l); err != nil || got != want[i] {
			t.Fatalf("line %d: %+v, %v; want %+v", i+1, got, err, want[i])
		}
	}
	if _, err := WriteJSON(&b, gen.Nexmark{}); err == nil {
		t.Error("WriteJSON of an unbounded generator: no error")
	}
}

// jsonPlainRun stops within 8 bytes before the first byte that needs an
// escape (or the end), never after it.
func TestJSONPlainRun(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'a', 'z', ' ', '~', 0x7f, 0x1f, 0x20, 0, '"', '\\', 0x80, 0xc3, 0xff, '!', '#', '[', ']'}
	for range 20_000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
			if r.IntN(12) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		s := string(b)
		first := len(s)
		for i := range b {
			if !jsonPlain[b[i]] {
				first = i
				break
			}
		}
		n := jsonPlainRun(s)
		if n%8 != 0 || n > first || first-n >= 8 && n+8 <= len(s) {
			t.Fatalf("jsonPlainRun(%q) = %d; the first byte to escape is at %d", s, n, first)
		}
	}
}
