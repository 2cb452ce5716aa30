package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// browser is headless Chromium driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: commands in on fd 3, replies and events
// out on fd 4, each a JSON object ended by a NUL byte), attached to one
// page.
type browser struct {
	cmd     *exec.Cmd
	in      *os.File // our end of fd 3
	out     *bufio.Reader
	outF    *os.File // our end of fd 4
	id      int
	session string
	stderr  *lockedWriter
}

// startBrowser starts Chromium with a fresh profile and opens url in a
// page of width x height pixels.
func startBrowser(t *testing.T, url string, width, height int) *browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{in: cmdW, outF: outR, out: bufio.NewReader(outR), stderr: &lockedWriter{b: &strings.Builder{}}}
	b.cmd = exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, outW}
	b.cmd.Stderr = b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	cmdR.Close()
	outW.Close()
	t.Cleanup(func() {
		b.in.Close()
		b.cmd.Process.Kill()
		b.cmd.Wait()
		b.outF.Close()
	})
	var target struct{ TargetID string }
	b.call(t, "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	b.call(t, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	b.navigate(t, url)
	return b
}

// navigate loads url in the page.
func (b *browser) navigate(t *testing.T, url string) {
	t.Helper()
	var res struct{ ErrorText string }
	b.call(t, "Page.navigate", map[string]any{"url": url}, &res)
	if res.ErrorText != "" {
		t.Fatalf("loading %s: %s", url, res.ErrorText)
	}
}

// call sends one command and waits for its reply, passing over events.
func (b *browser) call(t *testing.T, method string, params any, result any) {
	t.Helper()
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	req, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(req, 0)); err != nil {
		t.Fatalf("%s: %v\n%s", method, err, b.log())
	}
	b.outF.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		line, err := b.out.ReadBytes(0)
		if err != nil {
			t.Fatalf("%s: reading the reply: %v\n%s", method, err, b.log())
		}
		var rep struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(line[:len(line)-1], &rep); err != nil {
			t.Fatalf("%s: bad reply %q: %v", method, line, err)
		}
		if rep.ID != b.id {
			continue // an event, or a reply to no one
		}
		if rep.Error != nil {
			t.Fatalf("%s: %s", method, rep.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(rep.Result, result); err != nil {
				t.Fatalf("%s: reply %s: %v", method, rep.Result, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// JSON value into v.
func (b *browser) eval(t *testing.T, expr string, v any) {
	t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails *struct{ Text string }
	}
	b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluating %s: %s", expr, res.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(res.Result.Value, v); err != nil {
		t.Fatalf("evaluating %s: value %s: %v", expr, res.Result.Value, err)
	}
}

// screenshot saves the whole page, as tall as its content, as a PNG.
func (b *browser) screenshot(t *testing.T, width int, path string) {
	t.Helper()
	var h int
	b.eval(t, "document.documentElement.scrollHeight", &h)
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil)
	var shot struct{ Data string }
	b.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// log is what Chromium wrote to its standard error so far.
func (b *browser) log() string {
	b.stderr.mu.Lock()
	defer b.stderr.mu.Unlock()
	return b.stderr.b.String()
}
