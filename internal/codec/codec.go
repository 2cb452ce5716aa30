package codec

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// Codec encodes and decodes values of T in batches.
type Codec[T any] interface {
	// Append appends the encoding of vs to buf and returns it.
	Append(buf []byte, vs []T) []byte
	// Decode decodes every value in buf, appending them to vs; it returns
	// an error (never panics, never allocates absurd amounts) on malformed
	// or truncated input.
	Decode(buf []byte, vs []T) ([]T, error)
}

var (
	// ErrUnsupported is wrapped by For's error for a type it cannot encode.
	ErrUnsupported = errors.New("not supported")
	// ErrMalformed is wrapped by Decode's error for malformed or truncated
	// input.
	ErrMalformed = errors.New("malformed input")
	// ErrMismatch is wrapped by Decode's error for a batch encoded for a
	// different type or memory layout (its fingerprint differs).
	ErrMismatch = errors.New("type or layout mismatch")
)

var (
	registered sync.Map // reflect.Type -> Codec[T] (as any)
	defaults   sync.Map // reflect.Type -> built
)

// built is a cached result of compiling a type.
type built struct {
	codec any
	err   error
}

// Register makes c the codec of T for For (user-supplied codecs; last
// registration wins; safe for concurrent use). Register[T](nil) removes a
// registration. A registered codec applies where For[T] is asked for T
// itself; the reflection-compiled codecs of other types do not use it for
// fields of type T.
func Register[T any](c Codec[T]) {
	t := reflect.TypeFor[T]()
	if c == nil {
		registered.Delete(t)
		return
	}
	registered.Store(t, c)
}

// For returns the registered codec of T, else a fast built-in one for basic
// types, else a default compiled from T's type by reflection. The built-in
// and default codecs are built once per type and cached; the error for an
// unsupported type names the offending path and wraps ErrUnsupported.
func For[T any]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if c, ok := registered.Load(t); ok {
		return c.(Codec[T]), nil
	}
	b, ok := defaults.Load(t)
	if !ok {
		c, err := build[T](t)
		b, _ = defaults.LoadOrStore(t, built{codec: c, err: err})
	}
	if b.(built).err != nil {
		return nil, b.(built).err
	}
	return b.(built).codec.(Codec[T]), nil
}

// build picks and builds the default codec of T.
func build[T any](t reflect.Type) (Codec[T], error) {
	name := typeName(t)
	if l, ok := rawLayoutOf(t); ok {
		return &rawCodec[T]{name: name, l: l}, nil
	}
	root, err := compile(t)
	if err != nil {
		return nil, err
	}
	fp := fingerprint("C1/" + root.desc)
	if t.Kind() == reflect.String {
		return &stringCodec[T]{name: name, fp: fp}, nil
	}
	return &compiledCodec[T]{name: name, fp: fp, root: root}, nil
}

// typeName is how errors name the root of a type.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// unsupported is the error for a type For cannot encode at path.
func unsupported(path string, what string) error {
	return fmt.Errorf("codec: %s: %s %w", path, what, ErrUnsupported)
}
