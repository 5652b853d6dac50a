//go:build linux

package gobwire

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// The types of the tests hold every kind the package covers, nested as a
// frame's sessions nest.

type Inner struct {
	Name  string
	Count int32
	Ratio float64
	Flag  bool
	Kind  kindOfThing
	When  time.Time
	Tags  map[string]string
}

type kindOfThing uint8

type Embedded struct {
	A, B int
}

type Outer struct {
	Embedded
	Bool       bool
	Int        int
	Int8       int8
	Int64      int64
	Uint       uint
	Uint16     uint16
	Uint64     uint64
	Float32    float32
	Float64    float64
	Complex    complex128
	String     string
	Bytes      []byte
	Duration   time.Duration
	Time       time.Time
	Inner      Inner
	PInner     *Inner
	PInt       *int
	Inners     []Inner
	PInners    []*Inner
	Strings    []string
	Array      [3]int
	ByteArray  [4]byte
	Matrix     [][]float64
	Counts     map[string]int
	Floats     map[string]float64
	ByID       map[int]Inner
	Any        any
	AnyMap     map[string]any
	Func       func() // never sent
	Chan       chan int
	unexported int
}

// Lesser lacks most of Outer's fields: a decoder passes over them.
type Lesser struct {
	Int     int
	Strings []string
	Inner   struct{ Count int64 }
	Extra   string
}

// random fills v with random values, sometimes zero, nil or empty.
func random(rnd *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	if rnd.IntN(5) == 0 && v.Kind() != reflect.Struct {
		return // the zero value
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := rnd.Int64() >> rnd.IntN(64)
		if rnd.IntN(2) == 0 {
			x = -x
		}
		if v.OverflowInt(x) {
			x = int64(int8(x))
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := rnd.Uint64() >> rnd.IntN(64)
		if v.OverflowUint(x) {
			x = uint64(uint8(x))
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		f := []float64{rnd.NormFloat64() * 1e6, 0.5, math.Inf(1), math.Copysign(0, -1), 1e-300, 3}[rnd.IntN(6)]
		if v.Kind() == reflect.Float32 {
			f = float64(float32(f))
		}
		v.SetFloat(f)
	case reflect.Complex128:
		v.SetComplex(complex(rnd.NormFloat64(), rnd.NormFloat64()))
	case reflect.String:
		v.SetString(strings.Repeat("x\u00e9)", rnd.IntN(40)))
	case reflect.Slice:
		if depth > 3 {
			return
		}
		n := rnd.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			random(rnd, s.Index(i), depth+1)
			if s.Index(i).Kind() == reflect.Pointer && s.Index(i).IsNil() {
				s.Index(i).Set(reflect.New(s.Type().Elem().Elem())) // gob sends no nil element
			}
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			random(rnd, v.Index(i), depth+1)
		}
	case reflect.Map:
		if depth > 3 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range rnd.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			e := reflect.New(v.Type().Elem()).Elem()
			random(rnd, k, depth+1)
			random(rnd, e, depth+1)
			if e.Kind() == reflect.Interface && e.IsNil() {
				e.Set(reflect.ValueOf("nil is not sent in a map"))
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if depth > 3 {
			return
		}
		p := reflect.New(v.Type().Elem())
		random(rnd, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if rnd.IntN(3) > 0 {
				v.Set(reflect.ValueOf(time.Unix(rnd.Int64N(1<<40), rnd.Int64N(1e9)).In(time.FixedZone("", 3600*rnd.IntN(5)))))
			}
			return
		}
		for i := range v.NumField() {
			random(rnd, v.Field(i), depth+1)
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf([]any{int64(rnd.Int64()), rnd.Float64(), "text", true, uint8(7), []byte("b")}[rnd.IntN(6)]))
	}
}

func values(n int) []Outer {
	rnd := rand.New(rand.NewPCG(1, 2))
	out := make([]Outer, n)
	for i := range out {
		random(rnd, reflect.ValueOf(&out[i]).Elem(), 0)
		out[i].Func, out[i].Chan, out[i].unexported = nil, nil, 0
	}
	out[0] = Outer{} // the zero value too
	return out
}

// viaGob is what encoding/gob makes of vs, encoded and decoded by itself:
// the oracle.
func viaGob[T any](t *testing.T, vs []Outer) []T {
	t.Helper()
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	for i := range vs {
		if err := enc.Encode(&vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return decodeAll[T](t, gob.NewDecoder(&buf).Decode, len(vs))
}

func decodeAll[T any](t *testing.T, decode func(any) error, n int) []T {
	t.Helper()
	out := make([]T, n)
	for i := range out {
		if err := decode(&out[i]); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	var extra T
	if err := decode(&extra); err != io.EOF {
		t.Fatalf("after the values: %v, want io.EOF", err)
	}
	return out
}

func encodeOurs(t *testing.T, vs []Outer) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for i := range vs {
		if err := enc.Encode(&vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return &buf
}

func encodeGob(t *testing.T, vs []Outer) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	for i := range vs {
		if err := enc.Encode(vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return &buf
}

func compare[T any](t *testing.T, got, want []T) {
	t.Helper()
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("value %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestGobReadsOurs: encoding/gob reads what an Encoder writes, as what it
// writes itself.
func TestGobReadsOurs(t *testing.T) {
	vs := values(300)
	want := viaGob[Outer](t, vs)
	got := decodeAll[Outer](t, gob.NewDecoder(encodeOurs(t, vs)).Decode, len(vs))
	compare(t, got, want)
	compare(t, decodeAll[Lesser](t, gob.NewDecoder(encodeOurs(t, vs)).Decode, len(vs)), viaGob[Lesser](t, vs))
}

// TestWeReadGob: a Decoder reads what encoding/gob writes (recordings made
// before), into the same types and into one lacking fields.
func TestWeReadGob(t *testing.T) {
	vs := values(300)
	compare(t, decodeAll[Outer](t, NewDecoder(encodeGob(t, vs)).Decode, len(vs)), viaGob[Outer](t, vs))
	compare(t, decodeAll[Lesser](t, NewDecoder(encodeGob(t, vs)).Decode, len(vs)), viaGob[Lesser](t, vs))
}

// TestWeReadOurs: the pair this package serves.
func TestWeReadOurs(t *testing.T) {
	vs := values(300)
	compare(t, decodeAll[Outer](t, NewDecoder(encodeOurs(t, vs)).Decode, len(vs)), viaGob[Outer](t, vs))
}

// TestTruncatedAndDamaged: a stream cut anywhere, or with a byte changed,
// gives an error or a value, never a panic or a hang.
func TestTruncatedAndDamaged(t *testing.T) {
	vs := values(20)
	full := encodeOurs(t, vs).Bytes()
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 400; i++ {
		b := bytes.Clone(full[:rnd.IntN(len(full))])
		if i%2 == 1 && len(b) > 0 {
			b[rnd.IntN(len(b))] ^= byte(1 + rnd.IntN(255))
		}
		dec := NewDecoder(bytes.NewReader(b))
		var err error
		for n := 0; err == nil && n <= len(vs); n++ {
			var v Outer
			err = dec.Decode(&v)
		}
		if err == nil {
			t.Fatalf("a stream cut at %d bytes decoded more values than it holds", len(b))
		}
		if i%2 == 0 && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFormat) {
			t.Errorf("cut at %d: %v", len(b), err)
		}
	}
}

// TestHostileLengths: a header that claims a huge message, or a count
// that claims many elements, allocates what the stream holds, not what it
// claims. 0xF0000000 bytes would be 3.75 GiB.
func TestHostileLengths(t *testing.T) {
	alloc := func(b []byte, v any) (uint64, error) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := NewDecoder(bytes.NewReader(b)).Decode(v)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	// A 4-byte length (0xFC) of 0xF0000000, then nothing.
	n, err := alloc([]byte{0xFC, 0xF0, 0x00, 0x00, 0x00, 0x01}, new(Outer))
	if err == nil || n > 1<<20 {
		t.Errorf("a 6-byte stream claiming 3.75 GiB: err %v, %d bytes allocated", err, n)
	}
	// The value message of a []Outer whose count claims 100,000 elements,
	// followed by 100,000 bytes that fail as the first element: the count
	// is within the bytes left, each element would take far more memory.
	var buf bytes.Buffer
	if err := NewEncoder(&buf).Encode([]Outer{}); err != nil {
		t.Fatal(err)
	}
	// The stream ends in the value message: length 4, the type id (two
	// bytes), 0 (not a struct), count 0.
	b := buf.Bytes()
	last := b[len(b)-5:]
	if last[0] != 4 || last[3] != 0 || last[4] != 0 {
		t.Fatalf("the stream does not end in an empty slice's message: % x", last)
	}
	types := b[:len(b)-5]
	body := slices.Concat(last[1:3], []byte{0x00, 0xFD, 0x01, 0x86, 0xA0}, bytes.Repeat([]byte{0xFF}, 100_000))
	hostile := slices.Concat(types, []byte{0xFD, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body)
	n, err = alloc(hostile, new([]Outer))
	if want := uint64(100_000 * reflect.TypeFor[Outer]().Size()); err == nil || n >= want {
		t.Errorf("a count of 100,000 before garbage: err %v, %d bytes allocated (%d for the elements it claims)", err, n, want)
	}
}

// TestUnsupported: what the package does not cover is refused, not
// mangled.
func TestUnsupported(t *testing.T) {
	type named int
	for _, v := range []any{
		struct{ X any }{X: named(1)},
		struct{ X any }{X: Inner{}},
		struct{ x int }{},
		struct {
			A int
			B struct{ c int }
		}{},
		make(chan int),
	} {
		e := NewEncoder(io.Discard)
		for try := 1; try <= 2; try++ { // a refused type is refused again, never half-planned
			if err := e.Encode(v); err == nil {
				t.Errorf("%T encoded, try %d", v, try)
			}
		}
	}
	var buf bytes.Buffer
	if err := NewEncoder(&buf).Encode(Inner{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	var wrong struct{ Name int }
	if err := NewDecoder(&buf).Decode(&wrong); !errors.Is(err, ErrFormat) {
		t.Errorf("a string into an int: %v", err)
	}
}
