package ops

import (
	"testing"

	"trit/internal/cpu"
)

// TestSetFor checks that ops follows the kernels' tier: the set of each
// tier this machine has, and never one above the tier asked for.
func TestSetFor(t *testing.T) {
	for tier := range cpu.NumTiers {
		k := setFor(tier)
		if k.tier > tier {
			t.Errorf("setFor(%s) = %s, above the tier", cpu.Name(tier), k.name)
		}
		if tier <= cpu.HW && k.name != cpu.Name(tier) {
			t.Errorf("setFor(%s) = %s on a CPU with %s", cpu.Name(tier), k.name, cpu.Name(cpu.HW))
		}
	}
	if active != setFor(cpu.Tier) {
		t.Errorf("active set %s, tier in use %s", active.name, cpu.Name(cpu.Tier))
	}
}
