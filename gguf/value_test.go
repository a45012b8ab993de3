package gguf

import (
	"math"
	"slices"
	"testing"
)

func TestValueAccessors(t *testing.T) {
	type want struct {
		u    uint64
		uok  bool
		i    int64
		iok  bool
		f    float64
		fok  bool
		text string
	}
	tests := []struct {
		v    Value
		typ  ValueType
		want want
		str  string
	}{
		{Uint8(200), TypeUint8, want{200, true, 200, true, 200, true, ""}, "200"},
		{Int8(-5), TypeInt8, want{0, false, -5, true, -5, true, ""}, "-5"},
		{Uint16(65535), TypeUint16, want{65535, true, 65535, true, 65535, true, ""}, "65535"},
		{Int16(-300), TypeInt16, want{0, false, -300, true, -300, true, ""}, "-300"},
		{Uint32(1 << 31), TypeUint32, want{1 << 31, true, 1 << 31, true, 1 << 31, true, ""}, "2147483648"},
		{Int32(-1), TypeInt32, want{0, false, -1, true, -1, true, ""}, "-1"},
		{Int32(7), TypeInt32, want{7, true, 7, true, 7, true, ""}, "7"},
		{Uint64(math.MaxUint64), TypeUint64, want{math.MaxUint64, true, 0, false, math.MaxUint64, true, ""}, "18446744073709551615"},
		{Int64(math.MinInt64), TypeInt64, want{0, false, math.MinInt64, true, math.MinInt64, true, ""}, "-9223372036854775808"},
		{Float32(1.5), TypeFloat32, want{0, false, 0, false, 1.5, true, ""}, "1.5"},
		{Float64(-2.25), TypeFloat64, want{0, false, 0, false, -2.25, true, ""}, "-2.25"},
		{Bool(true), TypeBool, want{}, "true"},
		{String("hé"), TypeString, want{text: "hé"}, `"hé"`},
		{Array([]int32{1, -2}), TypeArray, want{}, "[1, -2]"},
		{Array([]string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}), TypeArray, want{},
			`["a", "b", "c", "d", "e", "f", "g", "h", … (9 items)]`},
		{Array([]Value{Array([]bool{true}), Array([]float32(nil))}), TypeArray, want{}, "[[true], []]"},
		{Value{}, TypeUint8, want{}, "<invalid>"},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			v := tt.v
			if v.Type() != tt.typ {
				t.Errorf("Type %v, want %v", v.Type(), tt.typ)
			}
			u, uok := v.Uint()
			i, iok := v.Int()
			f, fok := v.Float()
			text, _ := v.Text()
			got := want{u, uok, i, iok, f, fok, text}
			if got != tt.want {
				t.Errorf("accessors %+v, want %+v", got, tt.want)
			}
			if s := v.String(); s != tt.str {
				t.Errorf("String %q, want %q", s, tt.str)
			}
		})
	}
}

func TestValueArrays(t *testing.T) {
	v := Array([]int16{-1, 2, 300})
	if et, ok := v.ElemType(); !ok || et != TypeInt16 || v.Len() != 3 {
		t.Fatalf("elem %v %v len %d", et, ok, v.Len())
	}
	if x, _ := v.Index(2).Int(); x != 300 {
		t.Errorf("Index(2) = %d", x)
	}
	if ints, ok := v.Ints(); !ok || !slices.Equal(ints, []int64{-1, 2, 300}) {
		t.Errorf("Ints %v %v", ints, ok)
	}
	if fl, ok := v.Floats(); !ok || !slices.Equal(fl, []float64{-1, 2, 300}) {
		t.Errorf("Floats %v %v", fl, ok)
	}
	if _, ok := Array([]uint64{math.MaxUint64}).Ints(); ok {
		t.Error("Ints accepted a uint64 above MaxInt64")
	}
	if _, ok := Array([]string{"x"}).Ints(); ok {
		t.Error("Ints accepted strings")
	}
	if _, ok := Array([]float32{1}).Strings(); ok {
		t.Error("Strings accepted floats")
	}
	if _, ok := Uint8(1).ElemType(); ok || Uint8(1).Len() != 0 {
		t.Error("scalar reports array properties")
	}
	if s, ok := Array([]string{"a"}).Strings(); !ok || len(s) != 1 {
		t.Errorf("Strings %v %v", s, ok)
	}
	if fl, ok := Array([]float64{0.5}).Floats(); !ok || fl[0] != 0.5 {
		t.Errorf("Floats %v", fl)
	}
	if b, ok := Bool(false).Bool(); !ok || b {
		t.Error("Bool(false)")
	}
	if _, ok := Uint8(1).Bool(); ok {
		t.Error("Bool accepted a uint8")
	}
	defer func() {
		if recover() == nil {
			t.Error("Index of a scalar did not panic")
		}
	}()
	Uint8(1).Index(0)
}

func TestValueInterface(t *testing.T) {
	tests := []struct {
		v    Value
		want any
	}{
		{Uint8(1), uint8(1)}, {Int8(-1), int8(-1)}, {Uint16(2), uint16(2)}, {Int16(-2), int16(-2)},
		{Uint32(3), uint32(3)}, {Int32(-3), int32(-3)}, {Uint64(4), uint64(4)}, {Int64(-4), int64(-4)},
		{Float32(0.5), float32(0.5)}, {Float64(0.25), 0.25}, {Bool(true), true}, {String("s"), "s"},
	}
	for _, tt := range tests {
		if got := tt.v.Interface(); got != tt.want {
			t.Errorf("%v: Interface() = %#v, want %#v", tt.v, got, tt.want)
		}
	}
	if got, ok := Array([]uint16{9}).Interface().([]uint16); !ok || got[0] != 9 {
		t.Errorf("array Interface = %#v", got)
	}
	if (Value{}).Interface() != nil {
		t.Error("zero Value Interface is not nil")
	}
}
