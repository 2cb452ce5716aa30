package partition

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"reflect"
	"unsafe"
)

// The hashes here are deterministic across processes and runs (unlike
// hash/maphash, whose seed is random), so that every process of a job maps a
// key to the same key group.

const (
	prime1 = 0xa0761d6478bd642f
	prime2 = 0xe7037ed1a0b428db
	prime3 = 0x8ebc6af09c88c6e3
	prime4 = 0x589965cc75374cc3
)

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// HashBytes hashes b (wyhash-style: 8 bytes at a time, folded with 128-bit
// multiplies).
func HashBytes(b []byte) uint64 {
	return hashBytes(b, prime1)
}

func hashBytes(b []byte, seed uint64) uint64 {
	n := len(b)
	h := seed ^ uint64(n)*prime2
	for len(b) >= 16 {
		a := binary.LittleEndian.Uint64(b)
		c := binary.LittleEndian.Uint64(b[8:])
		h = mix(a^prime2, c^h)
		b = b[16:]
	}
	var a, c uint64
	switch {
	case len(b) >= 8:
		a = binary.LittleEndian.Uint64(b)
		c = binary.LittleEndian.Uint64(b[len(b)-8:])
	case len(b) >= 4:
		a = uint64(binary.LittleEndian.Uint32(b))
		c = uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	case len(b) > 0:
		a = uint64(b[0])<<16 | uint64(b[len(b)>>1])<<8 | uint64(b[len(b)-1])
	}
	return mix(prime3^uint64(n), mix(a^prime1, c^h^prime4))
}

// HashString hashes s without copying it.
func HashString(s string) uint64 {
	return hashBytes(unsafe.Slice(unsafe.StringData(s), len(s)), prime1)
}

// HashUint64 hashes an integer key.
func HashUint64(v uint64) uint64 {
	return mix(v^prime1, prime2^0x9e3779b97f4a7c15)
}

// Hasher returns a deterministic hash function for keys of type K. Keys
// whose underlying type is a string, an integer or a bool are hashed
// deterministically; any other comparable type falls back to hash/maphash
// with a seed fixed for the life of the process, which is deterministic
// within one process only. A type of size zero (struct{}) has one value,
// whose hash is a constant. Deterministic reports which case applies.
func Hasher[K comparable]() (h func(K) uint64, deterministic bool) {
	if reflect.TypeFor[K]().Size() == 0 {
		return func(K) uint64 { return HashUint64(0) }, true
	}
	switch reflect.TypeFor[K]().Kind() {
	case reflect.String:
		return func(k K) uint64 { return HashString(*(*string)(unsafe.Pointer(&k))) }, true
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return func(k K) uint64 { return HashUint64(*(*uint64)(unsafe.Pointer(&k))) }, true
	case reflect.Int32, reflect.Uint32:
		return func(k K) uint64 { return HashUint64(uint64(*(*uint32)(unsafe.Pointer(&k)))) }, true
	case reflect.Int16, reflect.Uint16:
		return func(k K) uint64 { return HashUint64(uint64(*(*uint16)(unsafe.Pointer(&k)))) }, true
	case reflect.Int8, reflect.Uint8, reflect.Bool:
		return func(k K) uint64 { return HashUint64(uint64(*(*uint8)(unsafe.Pointer(&k)))) }, true
	}
	return func(k K) uint64 { return maphash.Comparable(processSeed, k) }, false
}

var processSeed = maphash.MakeSeed()
