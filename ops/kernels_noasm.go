//go:build purego || !amd64

package ops

// kernelSets lists the available implementations, best first.
var kernelSets = []*kernelSet{&genericKernels}
