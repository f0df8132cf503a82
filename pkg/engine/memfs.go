package engine

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"
)

// memFS is a read-only fs.FS over a contract's files as the ledger keeps
// them (slash path -> content), so contract.LoadFS reads them in place.
type memFS struct {
	files map[string][]byte
	dirs  map[string][]string // dir -> sorted child names
}

func newMemFS(files map[string][]byte) (*memFS, error) {
	m := &memFS{files: map[string][]byte{}, dirs: map[string][]string{".": nil}}
	for p, b := range files {
		if !fs.ValidPath(p) || p == "." {
			return nil, fmt.Errorf("a file outside the contract's directory: %q", p)
		}
		m.files[p] = b
		for child := p; child != "."; {
			dir := path.Dir(child)
			if _, ok := m.files[dir]; ok {
				return nil, fmt.Errorf("%q is both a file and a directory", dir)
			}
			known := m.dirs[dir] != nil && slices.Contains(m.dirs[dir], path.Base(child))
			if !known {
				m.dirs[dir] = append(m.dirs[dir], path.Base(child))
			}
			child = dir
		}
	}
	for p := range m.files {
		if _, ok := m.dirs[p]; ok {
			return nil, fmt.Errorf("%q is both a file and a directory", p)
		}
	}
	for d := range m.dirs {
		slices.Sort(m.dirs[d])
	}
	return m, nil
}

func (m *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := m.files[name]; ok {
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(b))}, r: bytes.NewReader(b)}, nil
	}
	if _, ok := m.dirs[name]; ok {
		entries, _ := m.ReadDir(name)
		return &memDir{info: memInfo{name: path.Base(name), dir: true}, entries: entries}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadFile implements fs.ReadFileFS.
func (m *memFS) ReadFile(name string) ([]byte, error) {
	if b, ok := m.files[name]; ok && fs.ValidPath(name) {
		return bytes.Clone(b), nil
	}
	if _, ok := m.dirs[name]; ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("is a directory")}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadDir implements fs.ReadDirFS.
func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	children, ok := m.dirs[name]
	if !ok || !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	out := make([]fs.DirEntry, 0, len(children))
	for _, c := range children {
		p := path.Join(name, c)
		if b, ok := m.files[p]; ok {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: c, size: int64(len(b))}))
		} else {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: c, dir: true}))
		}
	}
	return out, nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	info    memInfo
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fmt.Errorf("is a directory")}
}
func (d *memDir) Close() error { return nil }

// ReadDir implements fs.ReadDirFile.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
