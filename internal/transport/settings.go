package transport

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/weirstream/weir/internal/jobid"
)

// Setting is one named value of Config.Settings: something every process
// of a job must have alike ("--workers" = "2", "binary" = a hash).
type Setting struct {
	Name, Value string
}

// MaxSettingsSize bounds Config.Settings encoded: 2 bytes, then per
// setting 4 bytes and its name and value. It is the most a handshake
// message can carry.
const MaxSettingsSize = 1<<16 - 1

// settingsSize is the encoded size of s.
func settingsSize(s []Setting) int {
	n := 2
	for _, x := range s {
		n += 4 + len(x.Name) + len(x.Value)
	}
	return n
}

// checkSettings checks Config.Settings: names not empty and unique, the
// whole list within MaxSettingsSize.
func checkSettings(s []Setting) error {
	if err := checkNames(s); err != nil {
		return err
	}
	if n := settingsSize(s); n > MaxSettingsSize {
		return fmt.Errorf("settings of %d bytes encoded exceed %d", n, MaxSettingsSize)
	}
	return nil
}

// checkNames checks that settings have names, each once.
func checkNames(s []Setting) error {
	seen := make(map[string]bool, len(s))
	for i, x := range s {
		switch {
		case x.Name == "":
			return fmt.Errorf("setting %d has no name", i)
		case seen[x.Name]:
			return fmt.Errorf("setting %q given twice", x.Name)
		}
		seen[x.Name] = true
	}
	return nil
}

// settingsBody encodes s (within MaxSettingsSize: checkSettings) as a
// settings message body: a uint16 count, then per setting a uint16
// length and the name, a uint16 length and the value.
func settingsBody(s []Setting) []byte {
	b := make([]byte, 0, settingsSize(s))
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	for _, x := range s {
		b = binary.BigEndian.AppendUint16(b, uint16(len(x.Name)))
		b = append(b, x.Name...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(x.Value)))
		b = append(b, x.Value...)
	}
	return b
}

// decodeSettings decodes a settings body; it must hold exactly the
// settings it counts.
func decodeSettings(body []byte) ([]Setting, error) {
	field := func() (string, bool) {
		if len(body) < 2 {
			return "", false
		}
		n := int(binary.BigEndian.Uint16(body))
		if len(body) < 2+n {
			return "", false
		}
		s := string(body[2 : 2+n])
		body = body[2+n:]
		return s, true
	}
	if len(body) < 2 {
		return nil, fmt.Errorf("settings of %d bytes are too short", len(body))
	}
	n := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	s := make([]Setting, 0, min(n, len(body)/4))
	for i := range n {
		name, ok1 := field()
		value, ok2 := field()
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("settings end within setting %d of %d", i, n)
		}
		s = append(s, Setting{name, value})
	}
	if len(body) > 0 {
		return nil, fmt.Errorf("%d bytes after the %d settings", len(body), n)
	}
	return s, nil
}

// difference is the first setting that differs between two lists.
type difference struct {
	Name       string
	A, B       string // the values in each list
	InA, InB   bool   // whether the setting is in each list
	Difference bool   // false: the lists agree
}

// firstDifference walks a in order and returns its first setting that b
// lacks or has with another value, else b's first setting that a lacks.
// The order of the lists does not matter otherwise. Both sides of a
// connection call it with the lower-indexed process's list as a, so both
// name the same setting.
func firstDifference(a, b []Setting) difference {
	d, differ := jobid.Compare(entries(a), entries(b))
	if !differ {
		return difference{}
	}
	return difference{Name: d.Name, A: d.Here, B: d.There, InA: d.Missing != "here", InB: d.Missing != "there", Difference: true}
}

func entries(s []Setting) jobid.Identity {
	id := make(jobid.Identity, len(s))
	for i, x := range s {
		id[i] = jobid.Entry(x)
	}
	return id
}

// showMax is how many bytes of a setting's value a message shows: a hex
// SHA-256 whole.
const showMax = 64

// sides shows a difference from one side (a: the side whose list
// firstDifference walked first): this side's value and the peer's, "not
// set" for a setting a side lacks. Long values are shown from a little
// before where they start to differ, cut to about showMax bytes, with
// their length.
func (d difference) sides(weAreA bool) (here, there string) {
	va, vb := showPair(d.A, d.B)
	if !d.InA {
		va = "not set"
	}
	if !d.InB {
		vb = "not set"
	}
	if weAreA {
		return va, vb
	}
	return vb, va
}

// showPair shows two values that differ: whole if both are short, else
// excerpts around their first difference.
func showPair(a, b string) (string, string) {
	if len(a) <= showMax && len(b) <= showMax {
		return show(a, 0, len(a)), show(b, 0, len(b))
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	start := max(0, p-showMax/4)
	return excerpt(a, start), excerpt(b, start)
}

// excerpt shows about showMax bytes of s from start, with its length if
// it is cut.
func excerpt(s string, start int) string {
	if len(s) <= showMax {
		return show(s, 0, len(s))
	}
	start = min(start, len(s))
	for start > 0 && start < len(s) && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(len(s), start+showMax)
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	return show(s, start, end) + fmt.Sprintf(" (%d bytes)", len(s))
}

// show shows s[start:end] as it is if it is plain text, else quoted;
// "…" marks what is cut on either side.
func show(s string, start, end int) string {
	v := s[start:end]
	plain := v != "" && utf8.ValidString(v)
	for _, r := range v {
		if !unicode.IsPrint(r) || r == '"' {
			plain = false
			break
		}
	}
	if !plain {
		v = strconv.Quote(v)
	}
	if start > 0 {
		v = "…" + v
	}
	if end < len(s) {
		v += "…"
	}
	return v
}
