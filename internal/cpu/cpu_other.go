//go:build !amd64 || purego

package cpu

// detect: only the portable Go code exists in this build.
func detect() int { return Generic }
