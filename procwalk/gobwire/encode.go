//go:build linux

package gobwire

import (
	"encoding"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"sync"
)

// Encoder writes values to one gob stream, each type's description before
// its first value. Safe for concurrent use, as gob's is.
type Encoder struct {
	mu     sync.Mutex
	w      io.Writer
	ifaces interfaces
	plans  map[reflect.Type]*plan
	nextID int
	out    []byte // the messages of one Encode
	msg    []byte // the message being built
}

// plan is how values of one type (pointers removed) are written.
type plan struct {
	kind   kind
	id     int
	name   string
	t      reflect.Type
	elem   *plan // slice, array, map value
	key    *plan // map
	length int   // array
	fields []fieldPlan
	// ptrMethod: the type's GobEncode or MarshalBinary is its pointer's.
	ptrMethod bool
	described bool // its description is on the stream
}

// fieldPlan is a struct field gob sends, in the order it sends them.
type fieldPlan struct {
	index int
	name  string
	ptrs  int // pointers to follow to the value
	plan  *plan
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, ifaces: newInterfaces(), plans: make(map[reflect.Type]*plan), nextID: firstUserID}
}

// Encode writes v, and the descriptions of its types not written yet, in
// one Write.
func (e *Encoder) Encode(v any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return fmt.Errorf("gobwire: cannot encode nil pointer of type %s", rv.Type())
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return fmt.Errorf("gobwire: cannot encode nil value")
	}
	p, err := e.planFor(rv.Type())
	if err != nil {
		return err
	}
	e.out = e.out[:0]
	e.describe(p)
	e.msg = appendInt(e.msg[:0], int64(p.id))
	if p.kind == kStruct {
		e.msg, err = e.appendStruct(e.msg, p, rv)
	} else {
		e.msg = appendUint(e.msg, 0) // a singleton: field 0
		e.msg, err = e.appendValue(e.msg, p, rv)
	}
	if err != nil {
		return err
	}
	e.endMessage()
	_, err = e.w.Write(e.out)
	return err
}

// endMessage moves the message built into out, behind its length.
func (e *Encoder) endMessage() {
	e.out = appendUint(e.out, uint64(len(e.msg)))
	e.out = append(e.out, e.msg...)
}

// planFor returns the plan of t (no pointer), making it and its parts'.
func (e *Encoder) planFor(t reflect.Type) (*plan, error) {
	if p, ok := e.plans[t]; ok {
		return p, nil
	}
	p := &plan{t: t, name: t.String()}
	if k := external(t, e.ifaces.gobEnc, e.ifaces.binEnc); k != 0 {
		p.kind, p.id = k, e.newID()
		iface := e.ifaces.gobEnc
		if k == kBinary {
			iface = e.ifaces.binEnc
		}
		p.ptrMethod = !t.Implements(iface)
		e.plans[t] = p
		return p, nil
	}
	if k := basicKind(t); k != 0 {
		p.kind, p.id = k, basicID(k)
		e.plans[t] = p
		return p, nil
	}
	e.plans[t] = p // before its parts: a type may hold itself
	var err error
	switch t.Kind() {
	case reflect.Struct:
		p.kind, p.id = kStruct, e.newID()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !sent(f) {
				continue
			}
			ft, ptrs := base(f.Type)
			var fp *plan
			if fp, err = e.planFor(ft); err != nil {
				break // to the delete below: a failed plan is never cached
			}
			p.fields = append(p.fields, fieldPlan{index: i, name: f.Name, ptrs: ptrs, plan: fp})
		}
		if err == nil && len(p.fields) == 0 {
			err = fmt.Errorf("gobwire: type %s has no exported fields", t)
		}
	case reflect.Slice, reflect.Array:
		p.kind = kSlice
		if t.Kind() == reflect.Array {
			p.kind, p.length = kArray, t.Len()
		}
		p.id = e.newID()
		p.elem, err = e.elemPlan(t.Elem())
	case reflect.Map:
		p.kind, p.id = kMap, e.newID()
		if p.key, err = e.elemPlan(t.Key()); err == nil {
			p.elem, err = e.elemPlan(t.Elem())
		}
	default:
		err = fmt.Errorf("gobwire: type %s is not supported", t)
	}
	if err != nil {
		delete(e.plans, t)
		return nil, err
	}
	return p, nil
}

// elemPlan is the plan of an element type, its pointers removed.
func (e *Encoder) elemPlan(t reflect.Type) (*plan, error) {
	b, _ := base(t)
	return e.planFor(b)
}

func (e *Encoder) newID() int {
	id := e.nextID
	e.nextID++
	return id
}

// describe appends the descriptions of p and its parts not yet on the
// stream, each a message of its own, p's first, as gob sends them.
func (e *Encoder) describe(p *plan) {
	if p.described || p.id < firstUserID {
		return
	}
	p.described = true
	m := appendInt(e.msg[:0], -int64(p.id))
	common := func(m []byte) []byte { // CommonType{Name, Id}, as field 0
		m = appendUint(m, 1)
		m = appendUint(m, 1)
		m = appendString(m, p.name)
		m = appendUint(m, 1)
		m = appendInt(m, int64(p.id))
		return appendUint(m, 0)
	}
	// wireType's fields: ArrayT, SliceT, StructT, MapT, GobEncoderT,
	// BinaryMarshalerT, TextMarshalerT; each a struct whose field 0 is
	// the CommonType.
	switch p.kind {
	case kArray:
		m = appendUint(m, 1)
		m = common(m)
		m = appendUint(m, 1)
		m = appendInt(m, int64(p.elem.id))
		if p.length != 0 { // a zero field is left out
			m = appendUint(m, 1)
			m = appendInt(m, int64(p.length))
		}
	case kSlice:
		m = appendUint(m, 2)
		m = common(m)
		m = appendUint(m, 1)
		m = appendInt(m, int64(p.elem.id))
	case kStruct:
		m = appendUint(m, 3)
		m = common(m)
		m = appendUint(m, 1)
		m = appendUint(m, uint64(len(p.fields)))
		for _, f := range p.fields { // fieldType{Name, Id}
			m = appendUint(m, 1)
			m = appendString(m, f.name)
			m = appendUint(m, 1)
			m = appendInt(m, int64(f.plan.id))
			m = appendUint(m, 0)
		}
	case kMap:
		m = appendUint(m, 4)
		m = common(m)
		m = appendUint(m, 1)
		m = appendInt(m, int64(p.key.id))
		m = appendUint(m, 1)
		m = appendInt(m, int64(p.elem.id))
	case kGob:
		m = appendUint(m, 5)
		m = common(m)
	case kBinary:
		m = appendUint(m, 6)
		m = common(m)
	}
	m = appendUint(m, 0) // the type's struct
	m = appendUint(m, 0) // wireType
	e.msg = m
	e.endMessage()
	switch p.kind {
	case kStruct:
		for _, f := range p.fields {
			e.describe(f.plan)
		}
	case kSlice, kArray:
		e.describe(p.elem)
	case kMap:
		e.describe(p.key)
		e.describe(p.elem)
	}
}

// appendStruct appends v's fields that gob sends: those not zero, each
// behind the difference of its number from the one before; then 0.
func (e *Encoder) appendStruct(b []byte, p *plan, v reflect.Value) ([]byte, error) {
	last := -1
	var err error
fields:
	for i, f := range p.fields {
		fv := v.Field(f.index)
		for range f.ptrs {
			if fv.IsNil() {
				continue fields
			}
			fv = fv.Elem()
		}
		if f.ptrs == 0 && omitted(f.plan, fv) || f.ptrs > 0 && omittedBehindPointer(f.plan, fv) {
			continue
		}
		b = appendUint(b, uint64(i-last))
		last = i
		if b, err = e.appendValue(b, f.plan, fv); err != nil {
			return b, err
		}
	}
	return appendUint(b, 0), nil
}

// omitted reports whether gob leaves out a struct field holding v: a zero
// number, false, an empty string or slice, a nil map or interface, a zero
// value of a type that encodes itself with a value method.
func omitted(p *plan, v reflect.Value) bool {
	switch p.kind {
	case kBool:
		return !v.Bool()
	case kInt:
		return v.Int() == 0
	case kUint:
		return v.Uint() == 0
	case kFloat:
		return v.Float() == 0
	case kComplex:
		return v.Complex() == 0
	case kBytes, kString, kSlice:
		return v.Len() == 0
	case kMap, kInterface:
		return v.IsNil()
	case kGob, kBinary:
		return !p.ptrMethod && v.IsZero()
	}
	return false // structs and arrays are always sent
}

// omittedBehindPointer is omitted for a field reached through a pointer:
// gob follows the pointer and asks its value, except that a type encoding
// itself is sent whenever the pointer is set.
func omittedBehindPointer(p *plan, v reflect.Value) bool {
	if p.kind == kGob || p.kind == kBinary {
		return false
	}
	return omitted(p, v)
}

// appendValue appends v (no pointer) whole, as an element of a slice or
// map is sent.
func (e *Encoder) appendValue(b []byte, p *plan, v reflect.Value) ([]byte, error) {
	switch p.kind {
	case kBool:
		return appendBool(b, v.Bool()), nil
	case kInt:
		return appendInt(b, v.Int()), nil
	case kUint:
		return appendUint(b, v.Uint()), nil
	case kFloat:
		return appendFloat(b, v.Float()), nil
	case kComplex:
		c := v.Complex()
		return appendFloat(appendFloat(b, real(c)), imag(c)), nil
	case kBytes:
		b = appendUint(b, uint64(v.Len()))
		return append(b, v.Bytes()...), nil
	case kString:
		return appendString(b, v.String()), nil
	case kInterface:
		return e.appendInterface(b, v)
	case kStruct:
		return e.appendStruct(b, p, v)
	case kSlice, kArray:
		b = appendUint(b, uint64(v.Len()))
		for i := range v.Len() {
			ev, err := deref(v.Index(i))
			if err != nil {
				return b, err
			}
			if b, err = e.appendValue(b, p.elem, ev); err != nil {
				return b, err
			}
		}
		return b, nil
	case kMap:
		b = appendUint(b, uint64(v.Len()))
		for it := v.MapRange(); it.Next(); {
			k, err := deref(it.Key())
			if err != nil {
				return b, err
			}
			val, err := deref(it.Value())
			if err != nil {
				return b, err
			}
			if b, err = e.appendValue(b, p.key, k); err != nil {
				return b, err
			}
			if b, err = e.appendValue(b, p.elem, val); err != nil {
				return b, err
			}
		}
		return b, nil
	case kGob, kBinary:
		data, err := marshal(p, v)
		if err != nil {
			return b, err
		}
		b = appendUint(b, uint64(len(data)))
		return append(b, data...), nil
	}
	return b, fmt.Errorf("gobwire: cannot encode %s", p.t)
}

// marshal calls v's GobEncode or MarshalBinary.
func marshal(p *plan, v reflect.Value) ([]byte, error) {
	if p.ptrMethod {
		if v.CanAddr() {
			v = v.Addr()
		} else {
			c := reflect.New(v.Type())
			c.Elem().Set(v)
			v = c
		}
	}
	if p.kind == kGob {
		return v.Interface().(gobEncoder).GobEncode()
	}
	return v.Interface().(encoding.BinaryMarshaler).MarshalBinary()
}

// appendInterface appends an interface value as gob does: the concrete
// type's name, its id, and the value as a singleton behind its length;
// "" for nil. Only basic concrete types, which need no description.
func (e *Encoder) appendInterface(b []byte, v reflect.Value) ([]byte, error) {
	if v.IsNil() {
		return appendUint(b, 0), nil
	}
	c := v.Elem()
	t := c.Type()
	k := basicKind(t)
	// gob's names of the basic types it registers: "int", "float64" ...,
	// and "[]uint8".
	if k == 0 || k == kInterface || k == kBytes && t != reflect.TypeFor[[]byte]() || k != kBytes && (t.PkgPath() != "" || t.Name() == "") {
		return b, fmt.Errorf("gobwire: interface value of type %s: only unnamed basic types are supported", t)
	}
	b = appendString(b, t.String())
	b = appendInt(b, int64(basicID(k)))
	inner, err := e.appendValue(appendUint(nil, 0), &plan{kind: k}, c)
	if err != nil {
		return b, err
	}
	b = appendUint(b, uint64(len(inner)))
	return append(b, inner...), nil
}

// deref follows v's pointers; a nil one cannot be sent in a slice or map.
func deref(v reflect.Value) (reflect.Value, error) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, fmt.Errorf("gobwire: nil element of type %s", v.Type())
		}
		v = v.Elem()
	}
	return v, nil
}

// The numbers of the wire: an unsigned integer below 128 is one byte;
// above, the negated count of its bytes, then the bytes, big-endian. A
// signed one is shifted left one bit, complemented when negative, the
// low bit saying so. A float is its bits with the bytes reversed.

func appendUint(b []byte, x uint64) []byte {
	if x <= 0x7f {
		return append(b, byte(x))
	}
	n := 8 - bits.LeadingZeros64(x)/8
	b = append(b, byte(-n))
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], x)
	return append(b, be[8-n:]...)
}

func appendInt(b []byte, i int64) []byte {
	if i < 0 {
		return appendUint(b, uint64(^i<<1)|1)
	}
	return appendUint(b, uint64(i<<1))
}

func appendFloat(b []byte, f float64) []byte {
	return appendUint(b, bits.ReverseBytes64(math.Float64bits(f)))
}

func appendBool(b []byte, t bool) []byte {
	if t {
		return appendUint(b, 1)
	}
	return appendUint(b, 0)
}

func appendString(b []byte, s string) []byte {
	b = appendUint(b, uint64(len(s)))
	return append(b, s...)
}
