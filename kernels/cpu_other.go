//go:build !amd64 || purego

package kernels

// detectTier: only the portable Go kernels exist in this build.
func detectTier() int { return tierGeneric }
