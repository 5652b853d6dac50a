//go:build linux

package gobwire

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
)

// Type ids gob gives its basic types; a stream's own types start at
// firstUserID (its descriptions of them use the ids of 16 to 23, which
// need no description).
const (
	idBool      = 1
	idInt       = 2
	idUint      = 3
	idFloat     = 4
	idBytes     = 5
	idString    = 6
	idComplex   = 7
	idInterface = 8
	firstUserID = 64
)

// ErrFormat wraps a stream that is not gob, or holds what this package
// does not read.
var ErrFormat = errors.New("gobwire: malformed or unsupported gob stream")

// kind is how a type travels.
type kind uint8

const (
	kBool kind = iota + 1
	kInt
	kUint
	kFloat
	kComplex
	kBytes
	kString
	kInterface
	kStruct
	kSlice
	kArray
	kMap
	kGob    // GobEncode / GobDecode
	kBinary // MarshalBinary / UnmarshalBinary
)

// gobEncoder and gobDecoder are encoding/gob's GobEncoder and GobDecoder.
type gobEncoder interface{ GobEncode() ([]byte, error) }
type gobDecoder interface{ GobDecode([]byte) error }

// external says how a type encodes itself, as gob decides it: GobEncode
// first, then MarshalBinary (on the type or its pointer). Text marshalers
// are not used, as gob does not use them.
func external(t reflect.Type, gob, binary reflect.Type) kind {
	for _, c := range []struct {
		iface reflect.Type
		k     kind
	}{{gob, kGob}, {binary, kBinary}} {
		if t.Implements(c.iface) || t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(c.iface) {
			return c.k
		}
	}
	return 0
}

// basicKind is the kind of t that needs no description, or 0.
func basicKind(t reflect.Type) kind {
	switch t.Kind() {
	case reflect.Bool:
		return kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kUint
	case reflect.Float32, reflect.Float64:
		return kFloat
	case reflect.Complex64, reflect.Complex128:
		return kComplex
	case reflect.String:
		return kString
	case reflect.Interface:
		return kInterface
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return kBytes
		}
	}
	return 0
}

// basicIDs are the ids of the basic kinds.
func basicID(k kind) int {
	switch k {
	case kBool:
		return idBool
	case kInt:
		return idInt
	case kUint:
		return idUint
	case kFloat:
		return idFloat
	case kComplex:
		return idComplex
	case kBytes:
		return idBytes
	case kString:
		return idString
	case kInterface:
		return idInterface
	}
	return 0
}

// base is t without its pointers, and how many there were.
func base(t reflect.Type) (reflect.Type, int) {
	n := 0
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		n++
		if n > 16 {
			break // a cycle of pointers: unsupported further down
		}
	}
	return t, n
}

// sent reports whether gob sends a struct field: exported, and not a chan
// or func (or a pointer to one).
func sent(f reflect.StructField) bool {
	if !f.IsExported() {
		return false
	}
	t, _ := base(f.Type)
	return t.Kind() != reflect.Chan && t.Kind() != reflect.Func
}

// interfaces are the interface types the codec asks about.
type interfaces struct {
	gobEnc, gobDec, binEnc, binDec reflect.Type
}

func newInterfaces() interfaces {
	return interfaces{
		gobEnc: reflect.TypeFor[gobEncoder](),
		gobDec: reflect.TypeFor[gobDecoder](),
		binEnc: reflect.TypeFor[encoding.BinaryMarshaler](),
		binDec: reflect.TypeFor[encoding.BinaryUnmarshaler](),
	}
}

// wireType is a type description as gob sends it: one of its fields is
// set. Only what decoding needs is kept.
type wireType struct {
	kind   kind
	name   string
	elem   int // slice, array, map value
	key    int // map
	length int // array
	fields []wireField
}

type wireField struct {
	name string
	id   int
}

func (w *wireType) String() string { return fmt.Sprintf("%s (kind %d)", w.name, w.kind) }
