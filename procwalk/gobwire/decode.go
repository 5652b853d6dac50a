//go:build linux

package gobwire

import (
	"bufio"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"sync"
)

// maxMessageBytes bounds one message, as gob bounds it (8 GiB on 64-bit
// hosts); a count past it is a damaged stream.
const maxMessageBytes = 8 << 30

// presize bounds how many elements a slice or map is made for before they
// are read: a count is checked against the bytes left, but an element of
// one byte on the wire may take hundreds in memory.
const presize = 1024

// presizeBytes is the largest message made at its stated length before it
// is read.
const presizeBytes = 1 << 20

// Decoder reads the values of one gob stream. Safe for concurrent use, as
// gob's is.
type Decoder struct {
	mu sync.Mutex
	r  interface {
		io.Reader
		io.ByteReader
	}
	ifaces interfaces
	types  map[int]*wireType
	fields map[structKey][]int   // each wire field's index in a struct, -1 for none
	ext    map[reflect.Type]kind // how each type decodes itself, 0 for not
}

// NewDecoder returns a Decoder reading r, through a bufio.Reader unless r
// reads a byte at a time itself.
func NewDecoder(r io.Reader) *Decoder {
	br, ok := r.(interface {
		io.Reader
		io.ByteReader
	})
	if !ok {
		br = bufio.NewReader(r)
	}
	return &Decoder{r: br, ifaces: newInterfaces(), types: make(map[int]*wireType),
		fields: make(map[structKey][]int), ext: make(map[reflect.Type]kind)}
}

// external is how t decodes itself (GobDecode, UnmarshalBinary), or 0.
func (d *Decoder) external(t reflect.Type) kind {
	if t.PkgPath() == "" && t.Kind() != reflect.Struct {
		return 0 // a type of no package (int, []string ...) has no methods
	}
	k, ok := d.ext[t]
	if !ok {
		k = external(t, d.ifaces.gobDec, d.ifaces.binDec)
		d.ext[t] = k
	}
	return k
}

// Decode reads the next value into v, a non-nil pointer, reading the type
// descriptions before it. io.EOF: the stream ended before a message.
func (d *Decoder) Decode(v any) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("gobwire: Decode needs a non-nil pointer")
	}
	for {
		msg, err := d.message()
		if err != nil {
			return err
		}
		r := &reader{b: msg}
		id := int(r.int())
		if r.err != nil {
			return r.err
		}
		if id < 0 {
			w, err := readWireType(r)
			if err != nil {
				return err
			}
			d.types[-id] = w
			continue
		}
		if w := d.types[id]; w != nil && w.kind == kStruct {
			target := rv.Elem()
			for target.Kind() == reflect.Pointer {
				if target.IsNil() {
					target.Set(reflect.New(target.Type().Elem()))
				}
				target = target.Elem()
			}
			err = d.readStruct(r, w, target)
		} else {
			if r.uint() != 0 && r.err == nil {
				return fmt.Errorf("%w: a singleton's field is not 0", ErrFormat)
			}
			err = d.read(r, id, rv.Elem())
		}
		if err == nil {
			err = r.err
		}
		return err
	}
}

// message reads the next message: its length, then its bytes (its own
// array: what is decoded from it may point into it).
func (d *Decoder) message() ([]byte, error) {
	first, err := d.r.ReadByte()
	if err != nil {
		return nil, err // io.EOF between messages
	}
	n := uint64(first)
	if first > 0x7f {
		size := -int(int8(first))
		if size > 8 {
			return nil, fmt.Errorf("%w: message length of %d bytes", ErrFormat, size)
		}
		var be [8]byte
		if _, err := io.ReadFull(d.r, be[:size]); err != nil {
			return nil, unexpected(err)
		}
		n = 0
		for _, c := range be[:size] {
			n = n<<8 | uint64(c)
		}
	}
	if n > maxMessageBytes {
		return nil, fmt.Errorf("%w: a message of %d bytes", ErrFormat, n)
	}
	if n <= presizeBytes {
		msg := make([]byte, n)
		if _, err := io.ReadFull(d.r, msg); err != nil {
			return nil, unexpected(err)
		}
		return msg, nil
	}
	// A large message is read before its length is trusted: a damaged or
	// hostile header would otherwise allocate up to the bound at once.
	msg, err := io.ReadAll(io.LimitReader(d.r, int64(n)))
	if err != nil {
		return nil, unexpected(err)
	}
	if uint64(len(msg)) != n {
		return nil, io.ErrUnexpectedEOF
	}
	return msg, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// read decodes a value of wire type id into v, allocating its pointers.
func (d *Decoder) read(r *reader, id int, v reflect.Value) error {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	w := d.types[id]
	if k := d.external(v.Type()); k != 0 {
		if w == nil || w.kind != k {
			return d.mismatch(id, v.Type())
		}
		data := r.bytes()
		if r.err != nil {
			return r.err
		}
		var err error
		if k == kGob {
			err = v.Addr().Interface().(gobDecoder).GobDecode(data)
		} else {
			err = v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(data)
		}
		return err
	}
	switch id {
	case idBool:
		if v.Kind() != reflect.Bool {
			return d.mismatch(id, v.Type())
		}
		v.SetBool(r.uint() != 0)
		return nil
	case idInt:
		if basicKind(v.Type()) != kInt {
			return d.mismatch(id, v.Type())
		}
		x := r.int()
		if v.OverflowInt(x) {
			return fmt.Errorf("%w: %d overflows %s", ErrFormat, x, v.Type())
		}
		v.SetInt(x)
		return nil
	case idUint:
		if basicKind(v.Type()) != kUint {
			return d.mismatch(id, v.Type())
		}
		x := r.uint()
		if v.OverflowUint(x) {
			return fmt.Errorf("%w: %d overflows %s", ErrFormat, x, v.Type())
		}
		v.SetUint(x)
		return nil
	case idFloat:
		if basicKind(v.Type()) != kFloat {
			return d.mismatch(id, v.Type())
		}
		v.SetFloat(r.float())
		return nil
	case idComplex:
		if basicKind(v.Type()) != kComplex {
			return d.mismatch(id, v.Type())
		}
		re := r.float()
		v.SetComplex(complex(re, r.float()))
		return nil
	case idBytes:
		if basicKind(v.Type()) != kBytes {
			return d.mismatch(id, v.Type())
		}
		b := r.bytes()
		if len(b) == 0 { // as gob: a nil slice stays nil
			if !v.IsNil() {
				v.SetLen(0)
			}
			return r.err
		}
		v.SetBytes(b)
		return nil
	case idString:
		if v.Kind() != reflect.String {
			return d.mismatch(id, v.Type())
		}
		v.SetString(string(r.bytes()))
		return nil
	case idInterface:
		if v.Kind() != reflect.Interface {
			return d.mismatch(id, v.Type())
		}
		return d.readInterface(r, v)
	}
	if w == nil {
		return fmt.Errorf("%w: type id %d was not described", ErrFormat, id)
	}
	switch w.kind {
	case kStruct:
		if v.Kind() != reflect.Struct {
			return d.mismatch(id, v.Type())
		}
		return d.readStruct(r, w, v)
	case kSlice:
		if v.Kind() != reflect.Slice {
			return d.mismatch(id, v.Type())
		}
		n := r.count()
		if n == 0 { // as gob: a nil slice stays nil
			if !v.IsNil() {
				v.SetLen(0)
			}
			return r.err
		}
		// Each element takes a byte at least on the wire but may take far
		// more in memory: past presize, grow with what is read, not with
		// what n claims.
		s := reflect.MakeSlice(v.Type(), min(n, presize), min(n, presize))
		zero := reflect.Zero(v.Type().Elem())
		for i := range n {
			if i == s.Len() {
				s = reflect.Append(s, zero)
			}
			if err := d.read(r, w.elem, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return r.err
	case kArray:
		if v.Kind() != reflect.Array || v.Len() != w.length {
			return d.mismatch(id, v.Type())
		}
		if n := r.count(); n != w.length {
			return fmt.Errorf("%w: an array of %d elements sent %d", ErrFormat, w.length, n)
		}
		for i := range w.length {
			if err := d.read(r, w.elem, v.Index(i)); err != nil {
				return err
			}
		}
		return r.err
	case kMap:
		if v.Kind() != reflect.Map {
			return d.mismatch(id, v.Type())
		}
		n := r.count()
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(v.Type(), min(n, presize)))
		}
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			if err := d.read(r, w.key, k); err != nil {
				return err
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if err := d.read(r, w.elem, e); err != nil {
				return err
			}
			v.SetMapIndex(k, e)
		}
		return r.err
	}
	return d.mismatch(id, v.Type())
}

// readStruct reads a struct's fields into v by name, passing over those v
// lacks; fields not sent keep their value.
func (d *Decoder) readStruct(r *reader, w *wireType, v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("%w: struct %s into %s", ErrFormat, w.name, v.Type())
	}
	index := d.fieldIndex(w, v.Type())
	field := -1
	for {
		delta := r.uint()
		if r.err != nil {
			return r.err
		}
		if delta == 0 {
			return nil
		}
		if delta > uint64(len(w.fields)) || field+int(delta) >= len(w.fields) {
			return fmt.Errorf("%w: field %d of struct %s, which has %d", ErrFormat, field+int(delta), w.name, len(w.fields))
		}
		field += int(delta)
		var err error
		if i := index[field]; i >= 0 {
			err = d.read(r, w.fields[field].id, v.Field(i))
		} else {
			err = d.skip(r, w.fields[field].id, 0)
		}
		if err != nil {
			return err
		}
	}
}

// structKey is a described struct type decoded into a Go struct type.
type structKey struct {
	w *wireType
	t reflect.Type
}

// fieldIndex is, for each field of w, the index of t's field of its name
// that gob would fill, or -1.
func (d *Decoder) fieldIndex(w *wireType, t reflect.Type) []int {
	key := structKey{w, t}
	if index, ok := d.fields[key]; ok {
		return index
	}
	byName := make(map[string]int)
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); sent(f) {
			byName[f.Name] = i
		}
	}
	index := make([]int, len(w.fields))
	for j, f := range w.fields {
		index[j] = -1
		if i, ok := byName[f.name]; ok {
			index[j] = i
		}
	}
	d.fields[key] = index
	return index
}

// maxDepth bounds the nesting skip follows: the types procwalk sends nest
// a few levels; a damaged stream could describe a type that holds itself.
const maxDepth = 64

// skip reads past a value of wire type id.
func (d *Decoder) skip(r *reader, id, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: values nested over %d deep", ErrFormat, maxDepth)
	}
	switch id {
	case idBool, idInt, idUint, idFloat:
		r.uint()
		return r.err
	case idComplex:
		r.uint()
		r.uint()
		return r.err
	case idBytes, idString:
		r.bytes()
		return r.err
	case idInterface:
		if name := r.bytes(); len(name) > 0 {
			r.int()
			r.bytes()
		}
		return r.err
	}
	w := d.types[id]
	if w == nil {
		return fmt.Errorf("%w: type id %d was not described", ErrFormat, id)
	}
	switch w.kind {
	case kStruct:
		field := -1
		for {
			delta := r.uint()
			if r.err != nil || delta == 0 {
				return r.err
			}
			if delta > uint64(len(w.fields)) || field+int(delta) >= len(w.fields) {
				return fmt.Errorf("%w: field %d of struct %s, which has %d", ErrFormat, field+int(delta), w.name, len(w.fields))
			}
			field += int(delta)
			if err := d.skip(r, w.fields[field].id, depth+1); err != nil {
				return err
			}
		}
	case kSlice, kArray:
		for range r.count() {
			if err := d.skip(r, w.elem, depth+1); err != nil {
				return err
			}
		}
		return r.err
	case kMap:
		for range r.count() {
			if err := d.skip(r, w.key, depth+1); err != nil {
				return err
			}
			if err := d.skip(r, w.elem, depth+1); err != nil {
				return err
			}
		}
		return r.err
	case kGob, kBinary:
		r.bytes()
		return r.err
	}
	return fmt.Errorf("%w: type id %d of no known kind", ErrFormat, id)
}

// readInterface reads an interface value holding a basic type.
func (d *Decoder) readInterface(r *reader, v reflect.Value) error {
	name := string(r.bytes())
	if r.err != nil {
		return r.err
	}
	if name == "" {
		v.SetZero()
		return nil
	}
	t := basicNamed(name)
	if t == nil {
		return fmt.Errorf("%w: an interface value of type %q", ErrFormat, name)
	}
	id := int(r.int())
	inner := &reader{b: r.bytes()}
	if r.err != nil {
		return r.err
	}
	if inner.uint() != 0 {
		return fmt.Errorf("%w: an interface value's field is not 0", ErrFormat)
	}
	c := reflect.New(t).Elem()
	if err := d.read(inner, id, c); err != nil {
		return err
	}
	if !t.AssignableTo(v.Type()) {
		return fmt.Errorf("%w: %s is not assignable to %s", ErrFormat, t, v.Type())
	}
	v.Set(c)
	return inner.err
}

// basicNamed is the basic type gob registers under name.
func basicNamed(name string) reflect.Type {
	for _, t := range []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[[]byte](),
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
		reflect.TypeFor[uintptr](), reflect.TypeFor[float32](), reflect.TypeFor[float64](),
		reflect.TypeFor[complex64](), reflect.TypeFor[complex128](),
	} {
		if t.String() == name {
			return t
		}
	}
	return nil
}

func (d *Decoder) mismatch(id int, t reflect.Type) error {
	name := fmt.Sprintf("type id %d", id)
	if w := d.types[id]; w != nil {
		name = w.String()
	}
	return fmt.Errorf("%w: %s does not decode into %s", ErrFormat, name, t)
}

// readWireType reads a type's description (gob's wireType).
func readWireType(r *reader) (*wireType, error) {
	w := &wireType{}
	err := r.fields(func(f int) error {
		switch f {
		case 0: // ArrayT
			w.kind = kArray
			return r.fields(func(f int) error {
				switch f {
				case 0:
					return readCommon(r, w)
				case 1:
					w.elem = int(r.int())
				case 2:
					w.length = int(r.int())
				default:
					return errField()
				}
				return r.err
			})
		case 1: // SliceT
			w.kind = kSlice
			return r.fields(func(f int) error {
				switch f {
				case 0:
					return readCommon(r, w)
				case 1:
					w.elem = int(r.int())
				default:
					return errField()
				}
				return r.err
			})
		case 2: // StructT
			w.kind = kStruct
			return r.fields(func(f int) error {
				switch f {
				case 0:
					return readCommon(r, w)
				case 1:
					n := r.count()
					w.fields = make([]wireField, n)
					for i := range w.fields {
						wf := &w.fields[i]
						err := r.fields(func(f int) error {
							switch f {
							case 0:
								wf.name = string(r.bytes())
							case 1:
								wf.id = int(r.int())
							default:
								return errField()
							}
							return r.err
						})
						if err != nil {
							return err
						}
					}
				default:
					return errField()
				}
				return r.err
			})
		case 3: // MapT
			w.kind = kMap
			return r.fields(func(f int) error {
				switch f {
				case 0:
					return readCommon(r, w)
				case 1:
					w.key = int(r.int())
				case 2:
					w.elem = int(r.int())
				default:
					return errField()
				}
				return r.err
			})
		case 4, 5, 6: // GobEncoderT, BinaryMarshalerT, TextMarshalerT
			w.kind = kGob
			if f != 4 {
				w.kind = kBinary // (text: read and passed over as bytes alike)
			}
			return r.fields(func(f int) error {
				if f != 0 {
					return errField()
				}
				return readCommon(r, w)
			})
		}
		return errField()
	})
	if err == nil && w.kind == 0 {
		err = fmt.Errorf("%w: an empty type description", ErrFormat)
	}
	return w, err
}

// errField is the error of a type description's field out of range (made
// when needed: fmt at package initialisation would cost every start).
func errField() error { return fmt.Errorf("%w: a type description's field out of range", ErrFormat) }

// readCommon reads CommonType{Name, Id}: the name is kept for messages.
func readCommon(r *reader, w *wireType) error {
	return r.fields(func(f int) error {
		switch f {
		case 0:
			w.name = string(r.bytes())
		case 1:
			r.int()
		default:
			return errField()
		}
		return r.err
	})
}

// reader reads a message; the first error sticks, and reads after it
// return zero.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: a message ends early", ErrFormat)
	}
	r.b = nil
}

func (r *reader) uint() uint64 {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	first := r.b[0]
	if first <= 0x7f {
		r.b = r.b[1:]
		return uint64(first)
	}
	n := -int(int8(first))
	if n > 8 || n+1 > len(r.b) {
		r.fail()
		return 0
	}
	var x uint64
	for _, c := range r.b[1 : n+1] {
		x = x<<8 | uint64(c)
	}
	r.b = r.b[n+1:]
	return x
}

func (r *reader) int() int64 {
	x := r.uint()
	if x&1 != 0 {
		return ^int64(x >> 1)
	}
	return int64(x >> 1)
}

func (r *reader) float() float64 { return math.Float64frombits(bits.ReverseBytes64(r.uint())) }

// bytes reads a length and that many bytes (pointing into the message).
func (r *reader) bytes() []byte {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

// count reads an element count, at most the bytes left: every element
// takes one at least.
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

// fields reads a struct's fields, calling read with each field's number,
// up to its terminating 0.
func (r *reader) fields(read func(field int) error) error {
	field := -1
	for {
		delta := r.uint()
		if r.err != nil {
			return r.err
		}
		if delta == 0 {
			return nil
		}
		if delta > 1<<20 {
			return errField()
		}
		field += int(delta)
		if err := read(field); err != nil {
			return err
		}
	}
}
