//go:build unix

package transport

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// ownGroup starts cmd in a process group of its own, so that killGroup
// reaches the processes it starts too (they inherit its pipes).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group that ownGroup gave p, which still
// exists while one of its processes lives, also after p itself exited.
func killGroup(p *os.Process) {
	if p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

// exitDeadline is the read deadline of a child's pipe once the child has
// exited: in the past, since readAfterExit does not wait.
func exitDeadline(time.Duration) time.Time { return time.Unix(1, 0) }

// readAfterExit reads what f already holds without waiting (the
// descriptor is non-blocking, and its read deadline is bypassed): io.EOF
// when it is empty, whether or not a process still holds the write end.
func readAfterExit(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, err
	}
	switch {
	case rerr == syscall.EAGAIN || (rerr == nil && n <= 0):
		return 0, io.EOF
	case rerr != nil:
		return 0, rerr
	}
	return n, nil
}
