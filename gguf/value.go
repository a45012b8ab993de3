package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueType is the type tag of a metadata value (gguf_type).
type ValueType uint32

// The GGUF v3 value types, with their on-disk tags.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var typeNames = [...]string{
	TypeUint8: "uint8", TypeInt8: "int8", TypeUint16: "uint16", TypeInt16: "int16",
	TypeUint32: "uint32", TypeInt32: "int32", TypeFloat32: "float32", TypeBool: "bool",
	TypeString: "string", TypeArray: "array", TypeUint64: "uint64", TypeInt64: "int64",
	TypeFloat64: "float64",
}

// String returns the type's name, e.g. "uint32".
func (t ValueType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "ValueType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// valid reports whether t is a known value type.
func (t ValueType) valid() bool { return t <= TypeFloat64 }

// size returns the encoded size of a fixed-size type, 0 for string and array.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one encoded value of type t can take; it
// bounds array counts before anything is allocated.
func (t ValueType) minSize() int64 {
	switch t {
	case TypeString:
		return 8 // length
	case TypeArray:
		return 12 // element type + count
	}
	return int64(t.size())
}

func (t ValueType) isInt() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

func (t ValueType) isSigned() bool {
	return t == TypeInt8 || t == TypeInt16 || t == TypeInt32 || t == TypeInt64
}

// A Value is one metadata value: a scalar, a string or an array. The zero
// Value is invalid (Type reports TypeUint8 but Valid reports false).
//
// Arrays keep their elements in a typed Go slice ([]uint8 … []float64,
// []bool, []string, or []Value for arrays of arrays), so a vocabulary of
// 150k strings costs one string header per entry.
type Value struct {
	typ  ValueType
	elem ValueType // element type of an array
	ok   bool
	bits uint64 // scalars: integer bits (sign-extended), float bits, or 0/1
	str  string
	arr  any
}

// Elem is the set of Go element types an array Value can hold.
type Elem interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string |
		uint64 | int64 | float64 | Value
}

func scalar(t ValueType, bits uint64) Value { return Value{typ: t, ok: true, bits: bits} }

// Uint8 returns a UINT8 value.
func Uint8(v uint8) Value { return scalar(TypeUint8, uint64(v)) }

// Int8 returns an INT8 value.
func Int8(v int8) Value { return scalar(TypeInt8, uint64(int64(v))) }

// Uint16 returns a UINT16 value.
func Uint16(v uint16) Value { return scalar(TypeUint16, uint64(v)) }

// Int16 returns an INT16 value.
func Int16(v int16) Value { return scalar(TypeInt16, uint64(int64(v))) }

// Uint32 returns a UINT32 value.
func Uint32(v uint32) Value { return scalar(TypeUint32, uint64(v)) }

// Int32 returns an INT32 value.
func Int32(v int32) Value { return scalar(TypeInt32, uint64(int64(v))) }

// Uint64 returns a UINT64 value.
func Uint64(v uint64) Value { return scalar(TypeUint64, v) }

// Int64 returns an INT64 value.
func Int64(v int64) Value { return scalar(TypeInt64, uint64(v)) }

// Float32 returns a FLOAT32 value.
func Float32(v float32) Value { return scalar(TypeFloat32, uint64(math.Float32bits(v))) }

// Float64 returns a FLOAT64 value.
func Float64(v float64) Value { return scalar(TypeFloat64, math.Float64bits(v)) }

// Bool returns a BOOL value.
func Bool(v bool) Value {
	if v {
		return scalar(TypeBool, 1)
	}
	return scalar(TypeBool, 0)
}

// String returns a STRING value.
func String(s string) Value { return Value{typ: TypeString, ok: true, str: s} }

// Array returns an ARRAY value holding s. The Value refers to s rather
// than copying it. For []Value (an array of arrays) every element must
// itself be an array; the Writer rejects anything else.
func Array[T Elem](s []T) Value {
	var et ValueType
	switch any(s).(type) {
	case []uint8:
		et = TypeUint8
	case []int8:
		et = TypeInt8
	case []uint16:
		et = TypeUint16
	case []int16:
		et = TypeInt16
	case []uint32:
		et = TypeUint32
	case []int32:
		et = TypeInt32
	case []float32:
		et = TypeFloat32
	case []bool:
		et = TypeBool
	case []string:
		et = TypeString
	case []uint64:
		et = TypeUint64
	case []int64:
		et = TypeInt64
	case []float64:
		et = TypeFloat64
	case []Value:
		et = TypeArray
	}
	if s == nil {
		s = []T{} // an empty array, not a missing one
	}
	return Value{typ: TypeArray, elem: et, ok: true, arr: s}
}

// Valid reports whether v holds a value (the zero Value does not).
func (v Value) Valid() bool { return v.ok }

// Type returns the type of v.
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array, and false for other values.
func (v Value) ElemType() (ValueType, bool) { return v.elem, v.ok && v.typ == TypeArray }

// Len returns the number of elements of an array, and 0 for other values.
func (v Value) Len() int {
	if !v.ok || v.typ != TypeArray {
		return 0
	}
	switch a := v.arr.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// Index returns element i of an array as a Value. Like a slice index it
// panics when v is not an array or i is out of range.
func (v Value) Index(i int) Value {
	if !v.ok || v.typ != TypeArray {
		panic("gguf: Index of non-array Value")
	}
	switch a := v.arr.(type) {
	case []uint8:
		return Uint8(a[i])
	case []int8:
		return Int8(a[i])
	case []uint16:
		return Uint16(a[i])
	case []int16:
		return Int16(a[i])
	case []uint32:
		return Uint32(a[i])
	case []int32:
		return Int32(a[i])
	case []float32:
		return Float32(a[i])
	case []bool:
		return Bool(a[i])
	case []string:
		return String(a[i])
	case []uint64:
		return Uint64(a[i])
	case []int64:
		return Int64(a[i])
	case []float64:
		return Float64(a[i])
	case []Value:
		return a[i]
	}
	panic("gguf: Value with unknown array type")
}

// Uint returns the value of any integer type as a uint64, and false for
// negative numbers and non-integer values.
func (v Value) Uint() (uint64, bool) {
	if !v.ok || !v.typ.isInt() || (v.typ.isSigned() && int64(v.bits) < 0) {
		return 0, false
	}
	return v.bits, true
}

// Int returns the value of any integer type as an int64, and false for
// uint64 values above math.MaxInt64 and non-integer values.
func (v Value) Int() (int64, bool) {
	if !v.ok || !v.typ.isInt() || (v.typ == TypeUint64 && v.bits > math.MaxInt64) {
		return 0, false
	}
	return int64(v.bits), true
}

// Float returns a FLOAT32 or FLOAT64 value as a float64. Integer values
// are converted too, since writers are not consistent about which they use
// for, say, a scaling factor.
func (v Value) Float() (float64, bool) {
	if !v.ok {
		return 0, false
	}
	switch {
	case v.typ == TypeFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case v.typ == TypeFloat64:
		return math.Float64frombits(v.bits), true
	case v.typ.isSigned():
		return float64(int64(v.bits)), true
	case v.typ.isInt():
		return float64(v.bits), true
	}
	return 0, false
}

// Bool returns the value of a BOOL.
func (v Value) Bool() (bool, bool) {
	if !v.ok || v.typ != TypeBool {
		return false, false
	}
	return v.bits != 0, true
}

// Text returns the value of a STRING.
func (v Value) Text() (string, bool) {
	if !v.ok || v.typ != TypeString {
		return "", false
	}
	return v.str, true
}

// Strings returns the elements of an array of strings. The slice is
// shared with v and must not be modified.
func (v Value) Strings() ([]string, bool) {
	a, ok := v.arr.([]string)
	return a, ok && v.ok
}

// Ints returns the elements of an array of any integer type as int64s,
// and false if v is not such an array or an element does not fit.
func (v Value) Ints() ([]int64, bool) {
	if !v.ok || v.typ != TypeArray || !v.elem.isInt() {
		return nil, false
	}
	n := v.Len()
	out := make([]int64, n)
	for i := range out {
		x, ok := v.Index(i).Int()
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// Floats returns the elements of an array of FLOAT32 or FLOAT64 (or of
// integers, converted) as float64s.
func (v Value) Floats() ([]float64, bool) {
	if !v.ok || v.typ != TypeArray || !(v.elem.isInt() || v.elem == TypeFloat32 || v.elem == TypeFloat64) {
		return nil, false
	}
	out := make([]float64, v.Len())
	for i := range out {
		out[i], _ = v.Index(i).Float()
	}
	return out, true
}

// Interface returns v as a Go value: uint8 … float64, bool, string, or for
// an array its slice ([]uint32, []string, []Value, …), shared with v.
func (v Value) Interface() any {
	if !v.ok {
		return nil
	}
	switch v.typ {
	case TypeUint8:
		return uint8(v.bits)
	case TypeInt8:
		return int8(v.bits)
	case TypeUint16:
		return uint16(v.bits)
	case TypeInt16:
		return int16(v.bits)
	case TypeUint32:
		return uint32(v.bits)
	case TypeInt32:
		return int32(v.bits)
	case TypeUint64:
		return v.bits
	case TypeInt64:
		return int64(v.bits)
	case TypeFloat32:
		return math.Float32frombits(uint32(v.bits))
	case TypeFloat64:
		return math.Float64frombits(v.bits)
	case TypeBool:
		return v.bits != 0
	case TypeString:
		return v.str
	}
	return v.arr
}

// String formats v for people: strings quoted, arrays as
// "[a, b, c, … (n items)]" with at most eight elements shown.
func (v Value) String() string {
	var b strings.Builder
	v.format(&b)
	return b.String()
}

func (v Value) format(b *strings.Builder) {
	switch {
	case !v.ok:
		b.WriteString("<invalid>")
	case v.typ == TypeString:
		b.WriteString(strconv.Quote(v.str))
	case v.typ == TypeArray:
		const show = 8
		n := v.Len()
		b.WriteByte('[')
		for i := 0; i < n && i < show; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			v.Index(i).format(b)
		}
		if n > show {
			fmt.Fprintf(b, ", … (%d items)", n)
		}
		b.WriteByte(']')
	default:
		fmt.Fprint(b, v.Interface())
	}
}
