package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// page is a markdown page being written.
type page struct {
	strings.Builder
}

func (p *page) para(format string, args ...any) {
	fmt.Fprintf(p, format, args...)
	p.WriteString("\n\n")
}

func (p *page) heading(level int, title string) {
	p.WriteString(strings.Repeat("#", level) + " " + title + "\n\n")
}

// Section returns the text of a page's section "## title", without its
// heading, and whether the page has it.
func Section(md, title string) (string, bool) {
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return "", false
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// table writes a table whose first row is its head.
func (p *page) table(rows [][]string) {
	for i, r := range rows {
		p.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			p.WriteString(strings.Repeat("|---", len(r)) + "|\n")
		}
	}
	p.WriteString("\n")
}

// commands numbers the commands of a section in the order its rows name
// them.
type commands struct {
	list []Entry
	idx  map[string]int
}

// ref returns the reference of e's command: [n].
func (c *commands) ref(e Entry) string {
	key := e.Command
	if key == "" {
		key = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if c.idx == nil {
		c.idx = map[string]int{}
	}
	i, ok := c.idx[key]
	if !ok {
		c.list = append(c.list, e)
		i = len(c.list)
		c.idx[key] = i
	}
	return fmt.Sprintf("[%d]", i)
}

// write lists the commands: each exact command line, and how long it ran.
func (c *commands) write(p *page) {
	if len(c.list) == 0 {
		return
	}
	p.WriteString("Commands:\n\n")
	for i, e := range c.list {
		p.WriteString(fmt.Sprintf("- [%d] %s\n", i+1, commandText(e)))
	}
	p.WriteString("\n")
}

// commandText is e's command in code, with its wall time, or where its
// line came from when the command is not recorded.
func commandText(e Entry) string {
	if e.Command == "" {
		return fmt.Sprintf("command not recorded (line %d of `%s`)", e.Line, e.File)
	}
	s := "`" + e.Command + "`"
	if e.WallSeconds > 0 {
		s += fmt.Sprintf(" (ran %.1f s)", e.WallSeconds)
	}
	return s
}

// missingText says why a suite's run failed or printed nothing.
func missingText(e Entry) string {
	reason := strings.TrimSpace(e.Reason)
	if reason == "" {
		reason = "no reason recorded"
	}
	return fmt.Sprintf("%s: %s", commandText(e), reason)
}

const none = "—"

// si writes v with a K, M or G suffix.
func si(v float64, ok bool) string {
	switch {
	case !ok || math.IsNaN(v) || math.IsInf(v, 0):
		return none
	case math.Abs(v) >= 1e9:
		return fmt.Sprintf("%.2f G", v/1e9)
	case math.Abs(v) >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case math.Abs(v) >= 1e3:
		return fmt.Sprintf("%.1f K", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func millis(v float64, ok bool) string {
	switch {
	case !ok:
		return none
	case v < 1:
		return fmt.Sprintf("%.3f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func times(v float64, ok bool) string {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return none
	}
	return fmt.Sprintf("%.2f×", v)
}

// plain writes v as an integer with thousands separated when it is one,
// else with 4 significant digits.
func plain(v float64, ok bool) string {
	if !ok {
		return none
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		s := fmt.Sprintf("%.0f", math.Abs(v))
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		if v < 0 {
			s = "-" + s
		}
		return s
	}
	return fmt.Sprintf("%.4g", v)
}

// imbalance writes an imbalance (max over mean, at least 1).
func imbalance(v float64, ok bool) string {
	if !ok {
		return none
	}
	return fmt.Sprintf("%.3f", v)
}

func checked(m map[string]any) string {
	switch v, ok := m["checked"].(bool); {
	case !ok:
		return none
	case v:
		return "yes"
	}
	return "**no**"
}

// field returns m[key] as text: a number as plain, a bool or string as
// it is.
func field(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case float64:
		return plain(v, true)
	case bool:
		return fmt.Sprint(v)
	case string:
		return v
	}
	return none
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func itoa(n int) string { return fmt.Sprint(n) }

func percent(v float64, ok bool) string {
	if !ok {
		return none
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}
