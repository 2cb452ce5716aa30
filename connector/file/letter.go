package file

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A Letter is one dead letter: a record a source rejected, where it came
// from and why. A file source fills in File, Line and Offset; a source of
// another kind says where the record was by Split (a partition, say) and
// Offset.
//
// A dead-letter output holds one JSON object per line:
//
//	{"source":"events","file":"in.jsonl","line":12,"offset":345,"reason":"unexpected end of JSON input","record":"{\"ad_id\":"}
//
// "line" is 1-based, "offset" is the byte offset of the record's first
// byte in its file (or split), and "record" the rejected bytes, without
// the line terminator, as a JSON string. A record that is not valid UTF-8
// is given as "record_b64" instead, its bytes in standard base64, so that
// every byte survives. The other strings are made valid UTF-8 (each
// invalid byte becomes U+FFFD); empty strings and a zero line are left
// out.
type Letter struct {
	Source string // the source's name in the job ("" outside a job)
	File   string // the file, named as the source's paths name it
	Split  string // the split, for a source of another kind
	Line   int64  // the line in File, from 1 (0: not a file)
	Offset int64  // the byte offset of the record in File or Split
	Reason string // why the record was rejected: the decoder's error
	Record string // the rejected bytes, without the line terminator
}

type letterJSON struct {
	Source    string  `json:"source,omitempty"`
	File      string  `json:"file,omitempty"`
	Split     string  `json:"split,omitempty"`
	Line      int64   `json:"line,omitempty"`
	Offset    int64   `json:"offset"`
	Reason    string  `json:"reason"`
	Record    *string `json:"record,omitempty"`
	RecordB64 []byte  `json:"record_b64,omitempty"`
}

// MarshalJSON implements json.Marshaler: the line's object, without the
// newline.
func (l Letter) MarshalJSON() ([]byte, error) {
	b, err := l.appendJSON(nil)
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// appendJSON appends the letter's line, with its newline, to b.
func (l Letter) appendJSON(b []byte) ([]byte, error) {
	v := letterJSON{Source: l.Source, File: l.File, Split: l.Split, Line: l.Line, Offset: l.Offset, Reason: l.Reason}
	if utf8.ValidString(l.Record) {
		v.Record = &l.Record
	} else {
		v.RecordB64 = []byte(l.Record)
	}
	w := bytes.NewBuffer(b)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return w.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *Letter) UnmarshalJSON(data []byte) error {
	var v letterJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if v.Record != nil && v.RecordB64 != nil {
		return errors.New("a dead letter with both record and record_b64")
	}
	*l = Letter{Source: v.Source, File: v.File, Split: v.Split, Line: v.Line, Offset: v.Offset, Reason: v.Reason, Record: string(v.RecordB64)}
	if v.Record != nil {
		l.Record = *v.Record
	}
	return nil
}

// ParseDeadLetters parses a dead-letter output. A last line without its
// newline, cut short by a crash, is left out, as a job restarted from a
// checkpoint leaves it out.
func ParseDeadLetters(data []byte) ([]Letter, error) {
	ls, _, err := parseLetters(data, "dead letters")
	return ls, err
}

// parseLetters parses the complete lines of data and returns them with
// their length in bytes; name is used in errors.
func parseLetters(data []byte, name string) ([]Letter, int, error) {
	var ls []Letter
	done := 0
	for n := 1; ; n++ {
		k := bytes.IndexByte(data[done:], '\n')
		if k < 0 {
			return ls, done, nil
		}
		var l Letter
		if err := json.Unmarshal(data[done:done+k], &l); err != nil {
			return nil, 0, fmt.Errorf("file: %s:%d: not a dead letter: %w", name, n, err)
		}
		ls, done = append(ls, l), done+k+1
	}
}

// letterKey is where a dead letter came from, which makes it unique.
type letterKey struct {
	source, file, split string
	offset              int64
}

// keyOf returns the letter's key, with its strings as they are after a
// round trip through JSON.
func keyOf(l Letter) letterKey {
	return letterKey{validUTF8(l.Source), validUTF8(l.File), validUTF8(l.Split), l.Offset}
}

// validUTF8 replaces each byte of s that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r) // RuneError for an invalid byte
		i += size
	}
	return string(b)
}
