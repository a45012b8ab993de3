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
// On amd64 the vector primitives and the fp16 conversions have assembly
// fast paths (AVX2+FMA, AVX-512, F16C) chosen at run time; the pure-Go
// versions are always built and are forced by the purego build tag.
// Results of the assembly and pure-Go paths can differ in the last bits
// only where floating-point association differs (see Dot).
//
// Length mismatches between slice arguments are programming errors and
// panic with an "ops:" message, as crypto/cipher does; values that may come
// from a model file (RoPE settings, Hadamard block sizes) are validated and
// reported as errors.
package ops
