package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/ui"
)

type word struct {
	Key string
	N   int
}

// rescaleJob counts words per key (a keyed Process) on 4 workers whose
// keyed operators start over 2, reading n records at 4000 a second.
func rescaleJob(n int) (*weir.Job, *weir.Collect[word]) {
	in := make([]string, n)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i%113)
	}
	j := weir.NewJob("rescale", weir.Workers(4), weir.ActiveInstances(2), weir.BatchInterval(20*time.Millisecond))
	s := weir.Source(j, "src", weir.Paced[string](weir.SliceSource[string]{Records: in, BatchSize: 16}, 4000))
	c := weir.Process(weir.KeyBy(s, func(w string) string { return w }), func(k string, st *int, _ string, out []word) []word {
		*st++
		return append(out, word{k, *st})
	}, weir.Name("count"))
	out := &weir.Collect[word]{}
	weir.Sink(c, out, weir.Name("out"))
	return j, out
}

// read is the records the job's source read so far.
func read(j *weir.Job) int64 {
	var n int64
	for _, p := range j.Stats().Processes {
		n += p.Records
	}
	return n
}

func post(t *testing.T, h http.Handler, contentType, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/rescale", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// POST /rescale refuses what is not a sound request (400, or 415 for
// another content type) and, with 409, a job that is not running or has
// fewer instances than asked; GET changes nothing. A sound request
// rescales the running job from 2 to 4 instances: the answer names the
// key groups that change owner (counted plainly from the contiguous
// ranges over 2 and over 4, so no refused request has moved any), and
// the job's counts are still every word's.
func TestRescaleEndpoint(t *testing.T) {
	const n = 16000
	j, out := rescaleJob(n)
	for _, h := range []http.Handler{ui.Handler(j), ui.RescaleHandler(j)} {
		if code, body := post(t, h, "application/json", `{"instances": 4}`); code != http.StatusConflict || !strings.Contains(body, "not running") {
			t.Errorf("a job not started yet: %d %s, want 409", code, body)
		}
	}
	done := make(chan error, 1)
	go func() { done <- j.Run(context.Background()) }()
	for deadline := time.Now().Add(time.Minute); read(j) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job read nothing in a minute")
		}
	}
	h := ui.Handler(j)
	for _, c := range []struct {
		contentType, body string
		code              int
		says              string
	}{
		{"", `{"instances": 4}`, http.StatusUnsupportedMediaType, "want application/json"},
		{"text/plain", `{"instances": 4}`, http.StatusUnsupportedMediaType, "want application/json"},
		{"application/json", ``, http.StatusBadRequest, "not a rescale request"},
		{"application/json", `{"instances": "4"}`, http.StatusBadRequest, "not a rescale request"},
		{"application/json", `{"instances": 4, "speed": 2}`, http.StatusBadRequest, `unknown field "speed"`},
		{"application/json", `{"instances": 4} {"instances": 3}`, http.StatusBadRequest, "more than one"},
		{"application/json", `{"strategy": "fluid"}`, http.StatusBadRequest, `"instances" is required`},
		{"application/json", `{"instances": 0}`, http.StatusBadRequest, `"instances" 0: must be at least 1`},
		{"application/json", `{"instances": 4, "strategy": "slow"}`, http.StatusBadRequest, `"strategy" "slow": want batched, all-at-once or fluid`},
		{"application/json", `{"instances": 4, "gap": 0}`, http.StatusBadRequest, `"gap" 0`},
		{"application/json", `{"instances": 4, "per_pair": -1}`, http.StatusBadRequest, `"per_pair" -1`},
		{"application/json", `{"instances": 5}`, http.StatusConflict, "the keyed operators run 4 instances"},
		{"application/json", `{"instances": 4, "leave": 1}`, http.StatusBadRequest, `"instances" and "leave" together`},
		{"application/json", `{"leave": -1}`, http.StatusBadRequest, `"leave" -1`},
		{"application/json", `{"leave": 1}`, http.StatusConflict, "runs in one process"},
	} {
		if code, body := post(t, h, c.contentType, c.body); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("POST %q (%s): %d %s, want %d saying %s", c.body, c.contentType, code, body, c.code, c.says)
		}
	}
	if code, _ := get(t, h, "GET", "/rescale"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /rescale: %d, want 405", code)
	}
	code, body := post(t, h, "application/json; charset=utf-8", `{"instances": 4, "strategy": "all-at-once", "gap": 2, "per_pair": 1}`)
	var ans ui.RescaleAnswer
	if code != 200 || json.Unmarshal([]byte(body), &ans) != nil {
		t.Fatalf("POST a rescale to 4: %d %s", code, body)
	}
	moves := 0
	for kg := range 128 {
		if kg*2/128 != kg*4/128 {
			moves++
		}
	}
	if ans.Moves != moves || ans.Steps != 1 || ans.First != ans.Last || ans.First == 0 {
		t.Errorf("answer %+v, want %d moves in one step", ans, moves)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	last := map[string]int{}
	for _, w := range out.Records() {
		last[w.Key] = max(last[w.Key], w.N)
	}
	for i := range 113 {
		k := fmt.Sprintf("w%d", i)
		if want := n/113 + min(1, max(0, n%113-i)); last[k] != want {
			t.Errorf("%s counted %d, want %d", k, last[k], want)
		}
	}
	if len(out.Records()) != n {
		t.Errorf("%d counts out, want one per record, %d", len(out.Records()), n)
	}
	if code, body := post(t, ui.Handler(newFake()), "application/json", `{"instances": 4}`); code != http.StatusNotImplemented {
		t.Errorf("a source that cannot rescale: %d %s, want 501", code, body)
	}
}
