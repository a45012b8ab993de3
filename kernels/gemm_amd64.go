//go:build amd64 && !purego

package kernels

//go:noescape
func gemmAVX512(c *gemmCall)
