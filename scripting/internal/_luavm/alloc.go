package lua

import (
	"reflect"
	"unsafe"
)

// iface is an internal representation of the go-interface.
type iface struct {
	itab unsafe.Pointer
	word unsafe.Pointer
}

const preloadLimit LNumber = 128

var _fv float64
var _uv uintptr

// preloads are the LValues of the numbers 0 to preloadLimit-1, written out
// so that the compiler lays them out as static data: filled in a loop,
// they were 128 allocations at every start of a program that links the VM
// (procwalk patch).
var preloads = [int(preloadLimit)]LValue{
	LNumber(0), LNumber(1), LNumber(2), LNumber(3), LNumber(4), LNumber(5), LNumber(6), LNumber(7),
	LNumber(8), LNumber(9), LNumber(10), LNumber(11), LNumber(12), LNumber(13), LNumber(14), LNumber(15),
	LNumber(16), LNumber(17), LNumber(18), LNumber(19), LNumber(20), LNumber(21), LNumber(22), LNumber(23),
	LNumber(24), LNumber(25), LNumber(26), LNumber(27), LNumber(28), LNumber(29), LNumber(30), LNumber(31),
	LNumber(32), LNumber(33), LNumber(34), LNumber(35), LNumber(36), LNumber(37), LNumber(38), LNumber(39),
	LNumber(40), LNumber(41), LNumber(42), LNumber(43), LNumber(44), LNumber(45), LNumber(46), LNumber(47),
	LNumber(48), LNumber(49), LNumber(50), LNumber(51), LNumber(52), LNumber(53), LNumber(54), LNumber(55),
	LNumber(56), LNumber(57), LNumber(58), LNumber(59), LNumber(60), LNumber(61), LNumber(62), LNumber(63),
	LNumber(64), LNumber(65), LNumber(66), LNumber(67), LNumber(68), LNumber(69), LNumber(70), LNumber(71),
	LNumber(72), LNumber(73), LNumber(74), LNumber(75), LNumber(76), LNumber(77), LNumber(78), LNumber(79),
	LNumber(80), LNumber(81), LNumber(82), LNumber(83), LNumber(84), LNumber(85), LNumber(86), LNumber(87),
	LNumber(88), LNumber(89), LNumber(90), LNumber(91), LNumber(92), LNumber(93), LNumber(94), LNumber(95),
	LNumber(96), LNumber(97), LNumber(98), LNumber(99), LNumber(100), LNumber(101), LNumber(102), LNumber(103),
	LNumber(104), LNumber(105), LNumber(106), LNumber(107), LNumber(108), LNumber(109), LNumber(110), LNumber(111),
	LNumber(112), LNumber(113), LNumber(114), LNumber(115), LNumber(116), LNumber(117), LNumber(118), LNumber(119),
	LNumber(120), LNumber(121), LNumber(122), LNumber(123), LNumber(124), LNumber(125), LNumber(126), LNumber(127),
}

// allocator is a fast bulk memory allocator for the LValue.
type allocator struct {
	size    int
	fptrs   []float64
	fheader *reflect.SliceHeader

	scratchValue  LValue
	scratchValueP *iface
}

func newAllocator(size int) *allocator {
	al := &allocator{
		size:    size,
		fptrs:   make([]float64, 0, size),
		fheader: nil,
	}
	al.fheader = (*reflect.SliceHeader)(unsafe.Pointer(&al.fptrs))
	al.scratchValue = LNumber(0)
	al.scratchValueP = (*iface)(unsafe.Pointer(&al.scratchValue))

	return al
}

// LNumber2I takes a number value and returns an interface LValue representing the same number.
// Converting an LNumber to a LValue naively, by doing:
// `var val LValue = myLNumber`
// will result in an individual heap alloc of 8 bytes for the float value. LNumber2I amortizes the cost and memory
// overhead of these allocs by allocating blocks of floats instead.
// The downside of this is that all of the floats on a given block have to become eligible for gc before the block
// as a whole can be gc-ed.
func (al *allocator) LNumber2I(v LNumber) LValue {
	// first check for shared preloaded numbers
	if v >= 0 && v < preloadLimit && float64(v) == float64(int64(v)) {
		return preloads[int(v)]
	}

	// check if we need a new alloc page
	if cap(al.fptrs) == len(al.fptrs) {
		al.fptrs = make([]float64, 0, al.size)
		al.fheader = (*reflect.SliceHeader)(unsafe.Pointer(&al.fptrs))
	}

	// alloc a new float, and store our value into it
	al.fptrs = append(al.fptrs, float64(v))
	fptr := &al.fptrs[len(al.fptrs)-1]

	// hack our scratch LValue to point to our allocated value
	// this scratch lvalue is copied when this function returns meaning the scratch value can be reused
	// on the next call
	al.scratchValueP.word = unsafe.Pointer(fptr)

	return al.scratchValue
}
