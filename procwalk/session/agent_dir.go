//go:build linux

package session

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/procwalk/procwalk/procwalk/internal/fsio"
	"golang.org/x/sys/unix"
)

// agent_dir.go keeps an index of each folder agents keep transcripts in,
// shared by the agents of that folder and kept between gathers: users keep
// a hundred thousand transcripts in one folder. A steady gather costs one
// lstat of the folder; only when its modification time changed is it
// listed again (getdents, names only), and only the files binding needs
// are stat'ed (agent_bind.go), each once unless asked again.

// transcriptDir is the index of one folder.
type transcriptDir struct {
	path  string
	owner uint32
	mtime time.Time // the folder's, at the last listing
	// racy: listed within racyWindow of its modification, when a file
	// created in the same timestamp tick would not change the time seen:
	// list again next gather.
	racy   bool
	listed bool
	err    error // of the last listing; nil when listed
	files  map[string]*dirFile
	seen   uint64 // the gather that last asked for it
	// changed is the gather whose listing found new names, added.
	changed uint64
	added   []string
	// restat is where the budgeted re-stat of old entries goes on.
	restat []string
	next   int
	// listing counts the listings; version the ones that changed the
	// entries, and re-stats that found a file written to.
	listing uint64
	version uint64
	// touched are the files the last re-stat found written, at gather
	// touchedAt.
	touched   []string
	touchedAt uint64
}

// dirFile is a .jsonl entry of a folder.
type dirFile struct {
	name string
	typ  byte // getdents type (DT_REG, DT_FIFO ... DT_UNKNOWN)
	ino  uint64
	// listing is the listing that saw it last.
	listing uint64
	// lstat facts, when statted.
	statted bool
	isReg   bool
	mode    uint32
	uid     uint32
	size    int64
	mtime   time.Time
	btime   time.Time // birth time, zero when the file system does not keep it
	// head is what its first line says, once read.
	head *fileHead
}

// fileHead is what a transcript's first line says.
type fileHead struct {
	sessionID string
	cwd       string
	sidechain bool   // a subagent's transcript (isSidechain)
	err       string // why it could not be read ("" when read)
}

// racyWindow: a folder listed this soon after its modification time is
// listed again: a file created in the same tick leaves the time as seen.
const racyWindow = 100 * time.Millisecond

// maxDirs bounds the folders indexed: an agent's days (Codex), its
// project folder and its subagents' folders, for every agent.
const maxDirs = 4096

// dir returns the index of path, owned by uid, refreshed for this gather.
func (tr *agentTracker) dir(path string, uid uint32) *transcriptDir {
	if tr.dirs == nil {
		tr.dirs = make(map[string]*transcriptDir)
	}
	d := tr.dirs[path]
	if d == nil || d.owner != uid {
		if len(tr.dirs) >= maxDirs {
			tr.dropDirs()
		}
		d = &transcriptDir{path: path, owner: uid}
		tr.dirs[path] = d
	}
	if d.seen != tr.gather {
		d.seen = tr.gather
		tr.refreshDir(d)
	}
	return d
}

// dropDirs forgets the folders not asked for in this gather.
func (tr *agentTracker) dropDirs() {
	for p, d := range tr.dirs {
		if d.seen != tr.gather {
			delete(tr.dirs, p)
		}
	}
}

// refreshDir lists d again when it changed since its last listing.
func (tr *agentTracker) refreshDir(d *transcriptDir) {
	var st unix.Stat_t
	if err := unix.Lstat(d.path, &st); err != nil {
		d.listed, d.err, d.files = false, err, nil
		return
	}
	mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	if d.listed && !d.racy && mtime.Equal(d.mtime) {
		return
	}
	listedAt := tr.now()
	fd, err := fsio.OpenUserDir(d.path, int(d.owner))
	if err != nil {
		d.listed, d.err, d.files = false, err, nil
		return
	}
	defer syscall.Close(fd)
	if tr.dirBuf == nil {
		tr.dirBuf = make([]byte, 64<<10)
	}
	// Mark and sweep: entries seen in this listing get its number; a
	// steady folder's map is kept, not rebuilt.
	d.listing++
	if d.files == nil {
		d.files = make(map[string]*dirFile)
	}
	first := !d.listed && d.listing == 1
	var added []string
	removed := false
	err = fsio.EachDirentIno(fd, tr.dirBuf, func(name []byte, typ byte, ino uint64) {
		if !bytes.HasSuffix(name, []byte(".jsonl")) {
			return
		}
		f := d.files[string(name)]
		if f != nil && f.typ == typ && f.ino == ino {
			f.listing = d.listing
			return
		}
		// A new name, or another file under an old one.
		n := string(name)
		d.files[n] = &dirFile{name: n, typ: typ, ino: ino, listing: d.listing}
		if !first && len(added) < maxAdded {
			added = append(added, n)
		}
	})
	if err != nil {
		d.listed, d.err, d.files = false, err, nil
		return
	}
	for n, f := range d.files {
		if f.listing != d.listing {
			delete(d.files, n)
			removed = true
		}
	}
	if len(added) > 0 {
		d.changed, d.added = tr.gather, added
	}
	if len(added) > 0 || removed {
		d.version++
	}
	d.listed, d.err, d.mtime = true, nil, mtime
	d.racy = listedAt.Sub(mtime) < racyWindow
	d.restat = d.restat[:0]
}

// maxAdded bounds the new names a listing keeps to look at.
const maxAdded = 1024

// names lists d's entries.
func (d *transcriptDir) names() []string {
	out := make([]string, 0, len(d.files))
	for n := range d.files {
		out = append(out, n)
	}
	return out
}

// stat lstat's f (again when force), its birth time included.
func (d *transcriptDir) stat(f *dirFile, force bool) {
	if f.statted && !force {
		return
	}
	f.statted = true
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, filepath.Join(d.path, f.name), unix.AT_SYMLINK_NOFOLLOW,
		unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_UID|unix.STATX_SIZE|unix.STATX_MTIME|unix.STATX_BTIME, &st)
	if err != nil {
		f.isReg, f.mode = false, 0
		return
	}
	f.mode = uint32(st.Mode)
	f.isReg = f.mode&syscall.S_IFMT == syscall.S_IFREG
	f.uid, f.size = st.Uid, int64(st.Size)
	f.mtime = time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec))
	f.btime = time.Time{}
	if st.Mask&unix.STATX_BTIME != 0 {
		f.btime = time.Unix(st.Btime.Sec, int64(st.Btime.Nsec))
	}
}

// bornBy is when f was created at the latest: its birth time, else (no
// birth time kept) when it was last written.
func (f *dirFile) bornBy() time.Time {
	if f.btime.IsZero() || f.btime.After(f.mtime) {
		return f.mtime
	}
	return f.btime
}

// restatSome re-stats up to n of d's entries, going round: files written to
// since they were first statted (an old session resumed) are seen within
// len(files)/n gathers, at a bounded cost each, and listed in touched.
func (d *transcriptDir) restatSome(n int, gather uint64) {
	if d.touchedAt == gather {
		return // another agent of the folder did, this gather
	}
	d.touched, d.touchedAt = d.touched[:0], gather
	if d.next >= len(d.restat) {
		d.restat, d.next = d.restat[:0], 0
		for name := range d.files {
			d.restat = append(d.restat, name)
		}
	}
	for ; n > 0 && d.next < len(d.restat); n, d.next = n-1, d.next+1 {
		if f := d.files[d.restat[d.next]]; f != nil && f.statted {
			was := f.mtime
			d.stat(f, true)
			if !f.mtime.Equal(was) {
				d.version++
				d.touched = append(d.touched, f.name)
			}
		}
	}
}

// readHead reads what f's first line says, once: the first line is read
// as a file its user controls (fsio.OpenUserFile), at most maxFirstLine
// bytes, its keys found without decoding it (Codex's session_meta holds
// base_instructions of 15-96 KiB, and a first prompt can be longer).
func (d *transcriptDir) readHead(f *dirFile, tr *agentTracker) *fileHead {
	if f.head != nil {
		return f.head
	}
	path := filepath.Join(d.path, f.name)
	if tr.beforeOpen != nil {
		tr.beforeOpen(path)
	}
	h := &fileHead{}
	file, err := fsio.OpenUserFile(path, int(d.owner))
	if err != nil {
		h.err = skipReason(err)
		f.head = h
		return h
	}
	defer file.Close()
	if tr.headBuf == nil {
		tr.headBuf = make([]byte, 0, 64<<10)
	}
	line, complete := readFirstLine(file, &tr.headBuf)
	if !complete {
		if file.Size >= maxFirstLine {
			h.err = "its first line is longer than 1 MiB"
			f.head = h
		}
		return h // not written whole yet: read again next time
	}
	h.sessionID = firstKey(line, `"sessionId":"`)
	if h.sessionID == "" {
		h.sessionID = firstKey(line, `"id":"`) // Codex's session_meta payload
	}
	h.cwd = firstKey(line, `"cwd":"`)
	h.sidechain = bytes.Contains(line, []byte(`"isSidechain":true`))
	f.head = h
	return h
}

// maxFirstLine bounds the read of a transcript's first line, to learn its
// session and folder.
const maxFirstLine = 1 << 20

// readFirstLine reads file's first line (without its newline) into buf,
// chunk by chunk, at most maxFirstLine bytes; complete is false when no
// newline came within them.
func readFirstLine(file *fsio.UserFile, buf *[]byte) (line []byte, complete bool) {
	b := (*buf)[:0]
	var off int64
	for off < maxFirstLine {
		if cap(b)-len(b) < 16<<10 {
			b = append(b, make([]byte, 64<<10)...)[:len(b)]
		}
		n, err := file.ReadAt(b[len(b):cap(b)], off)
		if n <= 0 || err != nil && n == 0 {
			break
		}
		chunk := b[len(b) : len(b)+n]
		b = b[:len(b)+n]
		off += int64(n)
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			*buf = b
			return b[:len(b)-n+i], true
		}
	}
	if cap(b) > 2<<20 {
		b = nil
	}
	*buf = b
	return nil, false
}

// firstKey is the string value of key ("name":") at its first occurrence in
// a JSON line, unescaped for the escapes paths use (\\, \/, \"); "" when
// absent. A quote inside a JSON string is escaped, so the pattern matches
// keys alone.
func firstKey(line []byte, key string) string {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return ""
	}
	v := line[i+len(key):]
	var out strings.Builder
	for j := 0; j < len(v) && j < 4096; j++ {
		switch c := v[j]; c {
		case '"':
			return out.String()
		case '\\':
			if j+1 >= len(v) {
				return ""
			}
			j++
			switch v[j] {
			case 'u':
				if j+4 >= len(v) {
					return ""
				}
				var r rune
				for _, h := range v[j+1 : j+5] {
					r <<= 4
					switch {
					case '0' <= h && h <= '9':
						r |= rune(h - '0')
					case 'a' <= h && h <= 'f':
						r |= rune(h-'a') + 10
					case 'A' <= h && h <= 'F':
						r |= rune(h-'A') + 10
					}
				}
				out.WriteRune(r)
				j += 4
			case 'n':
				out.WriteByte('\n')
			case 't':
				out.WriteByte('\t')
			default:
				out.WriteByte(v[j])
			}
		default:
			out.WriteByte(c)
		}
	}
	return ""
}
