//go:build purego || !amd64

package kvcache

import "trit/quant"

// simd is false: this build has only the Go kernels.
const simd = false

func fast(int) bool { return false }

func dotsQ8(dst []float32, q *Query, k []byte, blocks int) { dotsQ8Go(dst, q.Q8, k, blocks) }
func dotsQ4(dst []float32, q *Query, k []byte, blocks int) { dotsQ4Go(dst, q.Q8, k, blocks) }

// The float kernels of the SIMD tier; fast never lets Block call them.
func dotsT(f *quant.Format, dst, q []float32, kt []byte)     { panic("kvcache: no SIMD kernels") }
func accumulate(f *quant.Format, acc, p []float32, v []byte) { panic("kvcache: no SIMD kernels") }

func setSIMD(bool) {}

// Max returns the largest of x (len(x) ≥ 1, no NaNs).
func Max(x []float32) float32 { return maxGo(x) }

func dotsT4(dst, q []float32, kt []byte, m int) { panic("kvcache: no SIMD kernels") }
