package fakegcs

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// awaitAcked waits, at most limit, until the peer has acknowledged every
// byte written to c (the socket's SIOCOUTQ is 0). A close with SO_LINGER 0
// discards what the kernel still holds, unsent or sent and lost (a loopback
// backlog drops packets under load): waiting first is what makes the bytes
// "already on the wire" arrive before the reset, as rttConn promises.
func awaitAcked(c net.Conn, limit time.Duration) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	deadline := time.Now().Add(limit)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		queued := 0
		if raw.Control(func(fd uintptr) {
			queued, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		}) != nil || err != nil || queued == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}
