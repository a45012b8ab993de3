//go:build purego || !amd64

package ops

// mulAddTiles returns no tiles: MulAdd runs in mulAddGeneric.
func mulAddTiles() []mulAddTile { return nil }
