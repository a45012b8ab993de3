// Package ops implements the float32 row kernels a transformer forward pass
// needs besides the packed matrix products: normalisation, activations,
// softmax, rotary position embeddings (RoPE, with YaRN), the blocked
// Walsh–Hadamard transform used by Hadamard-rotated ternary models,
// fp16/bf16 conversion, and the vector primitives attention is built from.
//
// The numerics follow llama.cpp (ggml's CPU backend) wherever the choice
// changes results, so that logits computed with these kernels agree with
// llama.cpp's to rounding: sums of squares are accumulated in float64 as
// ggml does, RoPE angles are formed in float32 the way ggml forms them, and
// YaRN uses ggml's correction dims and ramp.
//
// On amd64 the vector primitives, softmax, the activations, the norms'
// sums of squares, the Hadamard butterflies and the fp16/bf16 conversions
// have assembly fast paths (AVX2+FMA with F16C, and AVX-512 for Dot and
// Axpy) chosen at run time, the tier package kernels runs (TRIT_CPU=
// generic|avx2|avx512 lowers both); Implementation names the set in use. The
// pure-Go versions are always built, run the same algorithms, and are
// forced by the purego build tag. Results of the two paths differ only in
// the last bits, where fused multiply-adds or summation order differ (see
// Dot and Axpy).
//
// Length mismatches between slice arguments are programming errors and
// panic with an "ops:" message, as crypto/cipher does; values that may come
// from a model file (RoPE settings, Hadamard block sizes) are validated and
// reported as errors.
package ops
