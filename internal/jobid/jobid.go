package jobid

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Entry is one named part of a job's identity.
type Entry struct {
	Name, Value string
}

// Identity is a job's entries, in the order the job defines them.
type Identity []Entry

// Diff is the first difference between two identities.
type Diff struct {
	Name string
	// Here and There are the values on each side; Missing says which side
	// lacks the entry ("here", "there" or "").
	Here, There string
	Missing     string
}

func (d Diff) String() string {
	switch d.Missing {
	case "here":
		return fmt.Sprintf("%s is %s there and absent here", d.Name, Short(d.There))
	case "there":
		return fmt.Sprintf("%s is %s here and absent there", d.Name, Short(d.Here))
	}
	return fmt.Sprintf("%s is %s here, %s there", d.Name, Short(d.Here), Short(d.There))
}

// Compare returns the first entry, in here's order, whose value differs
// between here and there, or that one of them lacks; ok is false if they
// are the same.
func Compare(here, there Identity) (d Diff, ok bool) {
	theirs := make(map[string]string, len(there))
	for _, e := range there {
		theirs[e.Name] = e.Value
	}
	mine := make(map[string]bool, len(here))
	for _, e := range here {
		mine[e.Name] = true
		v, found := theirs[e.Name]
		switch {
		case !found:
			return Diff{Name: e.Name, Here: e.Value, Missing: "there"}, true
		case v != e.Value:
			return Diff{Name: e.Name, Here: e.Value, There: v}, true
		}
	}
	for _, e := range there {
		if !mine[e.Name] {
			return Diff{Name: e.Name, There: e.Value, Missing: "here"}, true
		}
	}
	return Diff{}, false
}

// Filter returns the entries whose names keep accepts.
func (id Identity) Filter(keep func(name string) bool) Identity {
	var out Identity
	for _, e := range id {
		if keep(e.Name) {
			out = append(out, e)
		}
	}
	return out
}

// Short quotes v, cut to a readable length.
func Short(v string) string {
	const max = 160
	if len(v) > max {
		return strconv.Quote(v[:max-40]) + fmt.Sprintf("...(%d bytes)...", len(v)-max+40) + strconv.Quote(v[len(v)-20:])
	}
	return strconv.Quote(v)
}

const header = "weir job identity v1"

// Encode writes the identity as text: a header line, then one line per
// entry, its name and value quoted.
func Encode(id Identity) []byte {
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, e := range id {
		b.WriteString(strconv.Quote(e.Name))
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(e.Value))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Decode reads what Encode wrote.
func Decode(data []byte) (Identity, error) {
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, len(data)+1)
	if !sc.Scan() || sc.Text() != header {
		return nil, fmt.Errorf("jobid: not a job identity (want first line %q)", header)
	}
	var id Identity
	for line := 2; sc.Scan(); line++ {
		t := sc.Text()
		name, rest, err := unquote(t)
		if err != nil {
			return nil, fmt.Errorf("jobid: line %d: %w", line, err)
		}
		if len(rest) == 0 || rest[0] != ' ' {
			return nil, fmt.Errorf("jobid: line %d: want a space after the name", line)
		}
		value, rest, err := unquote(rest[1:])
		if err != nil {
			return nil, fmt.Errorf("jobid: line %d: %w", line, err)
		}
		if rest != "" {
			return nil, fmt.Errorf("jobid: line %d: trailing %q", line, rest)
		}
		id = append(id, Entry{Name: name, Value: value})
	}
	return id, sc.Err()
}

// unquote takes one quoted string from the front of s.
func unquote(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", fmt.Errorf("want a quoted string at %q", Short(s))
	}
	v, err := strconv.Unquote(q)
	return v, s[len(q):], err
}
