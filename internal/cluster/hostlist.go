package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// ExpandHostlist expands SLURM's compressed host list: comma-separated
// entries, each a name with optional bracketed ranges, such as
// "node[01-03,7],gpu5" (node01 node02 node03 node7 gpu5). Zero padding of
// a range's start is kept.
func ExpandHostlist(s string) ([]string, error) {
	var out []string
	for _, entry := range splitTop(s) {
		if entry == "" {
			continue
		}
		hosts, err := expandOne(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, hosts...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster: empty SLURM node list %q", s)
	}
	return out, nil
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

func expandOne(entry string) ([]string, error) {
	open := strings.IndexByte(entry, '[')
	if open < 0 {
		if strings.ContainsAny(entry, "]") {
			return nil, fmt.Errorf("cluster: SLURM host %q: unbalanced bracket", entry)
		}
		return []string{entry}, nil
	}
	end := strings.IndexByte(entry[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("cluster: SLURM host %q: unbalanced bracket", entry)
	}
	end += open
	prefix, ranges, rest := entry[:open], entry[open+1:end], entry[end+1:]
	tails, err := expandOne(rest)
	if rest == "" {
		tails, err = []string{""}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if ok {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a || b-a > 1<<16 {
			return nil, fmt.Errorf("cluster: SLURM host %q: bad range %q", entry, r)
		}
		for v := a; v <= b; v++ {
			num := fmt.Sprintf("%0*d", len(lo), v)
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
		}
	}
	return out, nil
}

// expandCounts expands SLURM's tasks-per-node list, such as "2(x3),1",
// into one count per node.
func expandCounts(s string, nodes int) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("cluster: SLURM tasks per node not set")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		count, rep := part, "1"
		if k := strings.Index(part, "(x"); k >= 0 && strings.HasSuffix(part, ")") {
			count, rep = part[:k], part[k+2:len(part)-1]
		}
		c, err1 := strconv.Atoi(count)
		r, err2 := strconv.Atoi(rep)
		if err1 != nil || err2 != nil || c < 1 || r < 1 || r > 1<<16 {
			return nil, fmt.Errorf("cluster: SLURM tasks per node %q: bad entry %q", s, part)
		}
		for range r {
			out = append(out, c)
		}
	}
	if len(out) != nodes {
		return nil, fmt.Errorf("cluster: SLURM tasks per node %q covers %d nodes, the node list has %d", s, len(out), nodes)
	}
	return out, nil
}
