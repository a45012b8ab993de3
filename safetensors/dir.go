package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// IndexFile names the weight map of a sharded checkpoint.
const IndexFile = "model.safetensors.index.json"

// SingleFile names the weights of an unsharded checkpoint.
const SingleFile = "model.safetensors"

// maxIndexSize bounds the index JSON read into memory.
const maxIndexSize = 64 << 20

// ErrIndex is wrapped by errors about a sharded checkpoint's index.
var ErrIndex = errors.New("safetensors: bad index")

// Set is the tensors of a checkpoint folder: one file, or the shards an
// index lists, looked up by name as one collection.
type Set struct {
	Files   []*File
	Tensors []*Tensor // shard by shard, in data order

	byName map[string]*Tensor
}

// Tensor returns the tensor with the given name, or nil.
func (s *Set) Tensor(name string) *Tensor { return s.byName[name] }

// Close closes every shard.
func (s *Set) Close() error {
	var errs []error
	for _, f := range s.Files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// OpenDir opens the checkpoint in dir: the shards named by
// model.safetensors.index.json when present, else model.safetensors. Every
// tensor the index maps must be in the shard it names, every tensor of a
// shard must be in the index under that shard, and no name may appear in
// two shards.
func OpenDir(dir string) (*Set, error) {
	idx, err := readIndex(filepath.Join(dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		f, err := Open(filepath.Join(dir, SingleFile))
		if err != nil {
			return nil, err
		}
		return NewSet(f)
	}
	if err != nil {
		return nil, err
	}
	var shards []string
	for _, file := range idx {
		if !slices.Contains(shards, file) {
			shards = append(shards, file)
		}
	}
	slices.Sort(shards)
	s := &Set{byName: map[string]*Tensor{}}
	for _, name := range shards {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Files = append(s.Files, f)
		for _, t := range f.Tensors {
			if idx[t.Name] != name {
				s.Close()
				return nil, fmt.Errorf("%w: %s holds %q, which the index maps to %q", ErrIndex, name, t.Name, idx[t.Name])
			}
		}
	}
	for _, f := range s.Files {
		s.add(f)
	}
	for name, file := range idx {
		if s.byName[name] == nil {
			s.Close()
			return nil, fmt.Errorf("%w: %q maps to %s, which does not hold it", ErrIndex, name, file)
		}
	}
	return s, nil
}

// NewSet makes a Set of already open files, which it then owns. A name in
// two files is an error (and the files stay open for the caller).
func NewSet(files ...*File) (*Set, error) {
	seen := map[string]bool{}
	for _, f := range files {
		for _, t := range f.Tensors {
			if seen[t.Name] {
				return nil, &TensorError{Name: t.Name, Err: ErrDuplicate}
			}
			seen[t.Name] = true
		}
	}
	s := &Set{Files: files, byName: map[string]*Tensor{}}
	for _, f := range files {
		s.add(f)
	}
	return s, nil
}

func (s *Set) add(f *File) {
	for _, t := range f.Tensors {
		s.byName[t.Name] = t
		s.Tensors = append(s.Tensors, t)
	}
}

// readIndex returns the index's weight_map, tensor name → shard file name.
// Shard names must be plain file names in the checkpoint folder.
func readIndex(path string) (map[string]string, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxIndexSize {
		return nil, fmt.Errorf("%w: %s is %d bytes (limit %d)", ErrIndex, path, st.Size(), maxIndexSize)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.NewDecoder(fd).Decode(&idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrIndex, path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s has no weight_map", ErrIndex, path)
	}
	for name, file := range idx.WeightMap {
		if file == "" || file != filepath.Base(file) || strings.ContainsAny(file, `/\`) || file == "." || file == ".." {
			return nil, fmt.Errorf("%w: %q maps to %q, not a file name in the folder", ErrIndex, name, file)
		}
	}
	return idx.WeightMap, nil
}
