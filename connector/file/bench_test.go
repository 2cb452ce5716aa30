package file

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysbjson"
)

// benchFile writes a file of about size bytes of YSB events, as JSON lines
// or CSV, and returns its path.
func benchFile(b *testing.B, size int, csv bool) string {
	b.Helper()
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		u := fmt.Sprintf("%08x-1f0a-4c5e-9a57-0d6e3c1b2a90", i)
		if csv {
			fmt.Fprintf(&sb, "%s,%s,%s,banner,view,%d,10.0.0.1\n", u, u, u, 1700000000000+i)
		} else {
			fmt.Fprintf(&sb, `{"user_id":%q,"page_id":%q,"ad_id":%q,"ad_type":"banner","event_type":"view","event_time":"%d","ip_address":"10.0.0.1"}`+"\n",
				u, u, u, 1700000000000+i)
		}
	}
	p := filepath.Join(b.TempDir(), "events")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchRead reads src with n readers at once, b.N times.
func benchRead[T any](b *testing.B, path string, src weir.Input[T], n int) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var records int64
	for b.Loop() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range n {
			wg.Go(func() {
				r, err := src.Open(weir.SourceContext{Instance: i, Parallelism: n})
				if err != nil {
					b.Error(err)
					return
				}
				defer r.Close()
				var k int64
				for {
					batch, err := r.Read()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Error(err)
						return
					}
					k += int64(len(batch))
				}
				mu.Lock()
				records += k
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

const benchSize = 64 << 20

func BenchmarkJSONLines(b *testing.B) {
	path := benchFile(b, benchSize, false)
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("lines/n=%d", n), func(b *testing.B) {
			benchRead(b, path, JSONLines([]string{path}, identity, Options{}), n)
		})
		b.Run(fmt.Sprintf("ysbjson/n=%d", n), func(b *testing.B) {
			benchRead(b, path, JSONLines([]string{path}, ysbjson.Decode, Options{}), n)
		})
	}
}

func BenchmarkCSV(b *testing.B) {
	path := benchFile(b, benchSize, true)
	decode := func(f []string) (gen.YSBEvent, error) {
		if len(f) != 7 {
			return gen.YSBEvent{}, fmt.Errorf("%d fields, want 7", len(f))
		}
		var t int64
		for _, c := range []byte(f[5]) {
			t = t*10 + int64(c-'0')
		}
		return gen.YSBEvent{UserID: f[0], PageID: f[1], AdID: f[2], AdType: f[3], EventType: f[4], EventTime: t, IPAddress: f[6]}, nil
	}
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchRead(b, path, CSV([]string{path}, decode, Options{}), n)
		})
	}
}
