package resumable

import (
	"io"
	"os"
	"strconv"
)

// privateFile opens a descriptor of the upload's own on the file behind r
// (nil when r is not an *os.File or the file cannot be reopened). Through
// /proc/self/fd it is the very file r has open, even renamed or unlinked;
// the device and inode are compared to be sure.
func privateFile(r io.ReaderAt) *privFile {
	f, ok := r.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if rc.Control(func(d uintptr) { fd = int(d) }) != nil || fd < 0 {
		return nil
	}
	g, err := os.Open("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil
	}
	fi, err1 := f.Stat()
	gi, err2 := g.Stat()
	if err1 != nil || err2 != nil || !gi.Mode().IsRegular() || !os.SameFile(fi, gi) {
		g.Close()
		return nil
	}
	return &privFile{f: g}
}
