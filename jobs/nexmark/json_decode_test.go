package nexmark

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/gen"
)

const (
	jsonPerson  = `{"kind":"person","id":1000,"name":"Peter Shultz","emailAddress":"a@b.com","creditCard":"1234 5678 9012 3456","city":"Bend","state":"OR","dateTime":1700000000000,"extra":"xyz"}`
	jsonAuction = `{"kind":"auction","id":1001,"itemName":"it","description":"de","initialBid":150,"reserve":300,"dateTime":1700000000001,"expires":1700000005000,"seller":1000,"category":10,"extra":""}`
	jsonBid     = `{"kind":"bid","auction":1001,"bidder":1000,"price":-7,"channel":"Google","url":"https://x/y","dateTime":-1700000000002,"extra":"e"}`
)

var (
	wantPerson = gen.NexmarkEvent{Kind: gen.PersonKind, Person: gen.Person{ID: 1000, Name: "Peter Shultz", Email: "a@b.com",
		CreditCard: "1234 5678 9012 3456", City: "Bend", State: "OR", DateTime: 1700000000000, Extra: "xyz"}}
	wantAuction = gen.NexmarkEvent{Kind: gen.AuctionKind, Auction: gen.Auction{ID: 1001, ItemName: "it", Description: "de",
		InitialBid: 150, Reserve: 300, DateTime: 1700000000001, Expires: 1700000005000, Seller: 1000, Category: 10}}
	wantBid = gen.NexmarkEvent{Kind: gen.BidKind, Bid: gen.Bid{Auction: 1001, Bidder: 1000, Price: -7, Channel: "Google",
		URL: "https://x/y", DateTime: -1700000000002, Extra: "e"}}
)

func TestDecodeJSONValid(t *testing.T) {
	withBid := func(f func(b *gen.Bid)) gen.NexmarkEvent { e := wantBid; f(&e.Bid); return e }
	tests := []struct {
		name, line string
		want       gen.NexmarkEvent
	}{
		{"person", jsonPerson, wantPerson},
		{"auction", jsonAuction, wantAuction},
		{"bid", jsonBid, wantBid},
		{"any order, kind last", `{"extra":"e","dateTime":-1700000000002,"url":"https://x/y","channel":"Google","price":-7,"bidder":1000,"auction":1001,"kind":"bid"}`, wantBid},
		{"whitespace", " \t{ \"kind\" : \"bid\" ,\n\"auction\":1001,\"bidder\":1000,\"price\":-7,\"channel\":\"Google\",\"url\":\"https://x/y\",\r\"dateTime\" :\t-1700000000002,\"extra\":\"e\" } \r\n", wantBid},
		{"escapes", strings.Replace(jsonBid, `"Google"`, `"a\"b\\c\/d\u00e9\n\ud83d\ude00\b\f\r\t"`, 1),
			withBid(func(b *gen.Bid) { b.Channel = "a\"b\\c/dé\n😀\b\f\r\t" })},
		{"escaped key", strings.Replace(jsonBid, `"price"`, `"pr\u0069ce"`, 1), wantBid},
		{"lone surrogates", strings.Replace(jsonBid, `"Google"`, `"\ud800x\udc00\ud800\u0041"`, 1),
			withBid(func(b *gen.Bid) { b.Channel = "\uFFFDx\uFFFD\uFFFDA" })},
		{"utf-8", strings.Replace(jsonBid, `"Google"`, `"é😀"`, 1), withBid(func(b *gen.Bid) { b.Channel = "é😀" })},
		{"largest", strings.Replace(jsonBid, `-7`, `9007199254740992`, 1), withBid(func(b *gen.Bid) { b.Price = 1 << 53 })},
		{"smallest", strings.Replace(jsonBid, `-7`, `-9007199254740992`, 1), withBid(func(b *gen.Bid) { b.Price = -1 << 53 })},
		{"minus zero", strings.Replace(jsonBid, `-7`, `-0`, 1), withBid(func(b *gen.Bid) { b.Price = 0 })},
		{"expires at once", strings.Replace(jsonAuction, `1700000005000`, `1700000000001`, 1),
			func() gen.NexmarkEvent { e := wantAuction; e.Auction.Expires = e.Auction.DateTime; return e }()},
	}
	for _, tt := range tests {
		got, err := DecodeJSON(tt.line)
		if err != nil || got != tt.want {
			t.Errorf("%s: DecodeJSON(%q) = %+v, %v; want %+v", tt.name, tt.line, got, err, tt.want)
		}
	}
}

func TestDecodeJSONInvalid(t *testing.T) {
	bid := func(old, new string) string { return strings.Replace(jsonBid, old, new, 1) }
	tests := []struct{ line, want string }{
		{``, "the line ends where '{' to begin the event should be"},
		{`[]`, `invalid JSON at byte 1: '[' where '{'`},
		{`null`, `invalid JSON at byte 1`},
		{`{}`, `missing field "kind"`},
		{jsonBid[:40], "invalid JSON: the line ends"},
		{jsonBid + "x", "invalid JSON at byte 132: 'x' where the end of the line"},
		{jsonBid + "{}", "where the end of the line after the event should be"},
		{bid(`"bid"`, `"car"`), `kind "car" is none of "person", "auction" and "bid"`},
		{bid(`"bid"`, `"Bid"`), `kind "Bid"`},
		{bid(`"kind":"bid"`, `"kind":1`), `field "kind" is a number, not a string`},
		{bid(`"price":-7,`, ``), `missing field "price" of a bid`},
		{bid(`"kind":"bid",`, ``), `missing field "kind"`},
		{bid(`"price":-7`, `"price":-7,"seller":1`), `field "seller" is not a field of a bid`},
		{bid(`"price":-7`, `"price":-7,"Price":1`), `unknown field "Price"`},
		{bid(`"price":-7`, `"price":-7,"price":-7`), `field "price" given twice`},
		{bid(`"kind":"bid"`, `"kind":"bid","kind":"bid"`), `field "kind" given twice`},
		{bid(`-7`, `"-7"`), `field "price" is a string, not an integer`},
		{bid(`-7`, `null`), `field "price" is null, not an integer`},
		{bid(`-7`, `true`), `field "price" is true, not an integer`},
		{bid(`-7`, `[1]`), `field "price" is an array, not an integer`},
		{bid(`-7`, `{"a":1}`), `field "price" is an object, not an integer`},
		{bid(`"Google"`, `7`), `field "channel" is a number, not a string`},
		{bid(`"Google"`, `nul`), `'n' where a value should be`},
		{bid(`-7`, `7.5`), `field "price": 7.5 is not an integer`},
		{bid(`-7`, `7.0`), `field "price": 7.0 is not an integer`},
		{bid(`-7`, `1e3`), `field "price": 1e3 is not an integer`},
		{bid(`-7`, `1e`), `',' where a digit of the exponent should be`},
		{bid(`-7`, `07`), `'7' where ',' or '}'`},
		{bid(`-7`, `-`), `',' where a digit should be`},
		{bid(`-7`, `+7`), `'+' where a value should be`},
		{bid(`-7`, `9007199254740993`), `field "price": 9007199254740993 is outside ±2^53`},
		{bid(`-7`, `-99999999999999999999`), `field "price": -99999999999999999999 is outside ±2^53`},
		{bid(`-1700000000002`, `1e18`), `field "dateTime": 1e18 is not an integer`},
		{bid(`-1700000000002`, `9223372036854775807`), `field "dateTime": 9223372036854775807 is outside ±2^53`},
		{strings.Replace(jsonAuction, `1700000005000`, `1700000000000`, 1), `the auction expires (1700000000000) before its dateTime (1700000000001)`},
		{bid(`"Google"`, "\"Goo\x01gle\""), `'\x01' where an escape (a control character)`},
		{bid(`"Google"`, "\"Goo\tgle\""), `'\t' where an escape`},
		{bid(`"Google"`, "\"Goo\xffgle\""), `invalid UTF-8 at byte 69`},
		{bid(`"Google"`, "\"G\\noo\xffgle\""), `invalid UTF-8 at byte 71`},
		{bid(`"Google"`, `"Go\x"`), `'\\' where an escape (\" \\ \/ \b \f \n \r \t or \uXXXX)`},
		{bid(`"Google"`, `"Go\u12"`), `where \u and four hexadecimal digits`},
		{bid(`"Google"`, `"Go\u12G4"`), `where \u and four hexadecimal digits`},
		{bid(`"bidder"`, `"bidder`), `unknown field "bidder:1000,"`},
		{bid(`"bidder":`, `"bidder"`), `'1' where ':' after a field name`},
		{bid(`,"bidder"`, `"bidder"`), `'"' where ',' or '}'`},
		{bid(`,"bidder"`, `,,"bidder"`), `',' where '"' to begin a field name`},
		{bid(`,"bidder"`, `,bidder`), `'b' where '"' to begin a field name`},
		{`{"kind":"bid"`, `the line ends where ',' or '}'`},
		{`{"kind":"bid`, `the line ends where '"' to end a string`},
		{`{"kind":"bi\`, `the line ends where an escape`},
		{`{"kind":"bi\"`, `the line ends where '"' to end a string`},
		{`{"kind":`, `the line ends where a value should be`},
	}
	for _, tt := range tests {
		got, err := DecodeJSON(tt.line)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeJSON(%q) = %+v, %v; want an error with %q", tt.line, got, err, tt.want)
		}
	}
}

// Decoding a line without escapes allocates nothing.
func TestDecodeJSONAllocs(t *testing.T) {
	for _, line := range []string{jsonPerson, jsonAuction, jsonBid} {
		if n := testing.AllocsPerRun(100, func() { DecodeJSON(line) }); n != 0 {
			t.Errorf("DecodeJSON(%.30s…): %v allocations, want 0", line, n)
		}
	}
	e := wantAuction
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { AppendJSON(buf[:0], &e) }); n != 0 {
		t.Errorf("AppendJSON: %v allocations, want 0", n)
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	evs := jsonEvents(b, gen.Nexmark{Events: 10_000, Seed: 1, StartTime: 1})
	lines := make([]string, len(evs))
	size := 0
	for i := range evs {
		lines[i] = string(AppendJSON(nil, &evs[i]))
		size += len(lines[i]) + 1
	}
	b.SetBytes(int64(size / len(lines)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeJSON(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkAppendJSON(b *testing.B) {
	evs := jsonEvents(b, gen.Nexmark{Events: 10_000, Seed: 1, StartTime: 1})
	buf := make([]byte, 0, 4096)
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		buf = AppendJSON(buf[:0], &evs[i%len(evs)])
		n += len(buf) + 1
	}
	b.SetBytes(int64(n / max(b.N, 1)))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
