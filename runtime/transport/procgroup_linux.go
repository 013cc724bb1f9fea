//go:build linux

package transport

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// pipeIdentity returns the inode of the pipe that f is an end of.
func pipeIdentity(f *os.File) (pipeID, bool) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return pipeID(st.Ino), true
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn  = 0x1
	pollHup = 0x10
)

// pipeHeld reports whether a process may still hold the write end of the
// pipe whose read end is f: poll(2) reports POLLHUP once no one does. A
// pipe that cannot be polled (closed already) counts as held.
func pipeHeld(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	held := true
	_ = rc.Control(func(fd uintptr) {
		pfd := pollFd{fd: int32(fd), events: pollIn}
		var zero syscall.Timespec
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
			if e != syscall.EINTR {
				held = e != 0 || pfd.revents&pollHup == 0
				return
			}
		}
	})
	return held
}

// killHolders kills every process but the harness that holds an end of
// one of the pipes, found through /proc/PID/fd. Each is signalled through
// a pidfd (os.FindProcess opens one) after checking again that it holds
// the pipe, so a pid recycled in between is never hit. A holder that forks
// while it is found gets a new pid: the search is repeated while it finds
// new holders, a few times.
func killHolders(ids []pipeID) {
	if len(ids) == 0 {
		return
	}
	links := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		links["pipe:["+strconv.FormatUint(uint64(id), 10)+"]"] = struct{}{}
	}
	self := os.Getpid()
	killed := map[int]bool{}
	for range 3 {
		found := false
		for _, pid := range pipeHolders(links, self) {
			if !killed[pid] {
				killed[pid], found = true, true
				killHolder(pid, links, self)
			}
		}
		if !found {
			return
		}
	}
}

// pipeHolders lists the processes that hold one of links among their file
// descriptors, except init, self, and the children of self: a process the
// harness has just forked holds copies of all its descriptors until it
// executes its program, and a direct child of the harness never inherited
// the pipes of one of its other children.
func pipeHolders(links map[string]struct{}, self int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		if holds(name, links, self) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// holds reports whether process pid, which is not a child of self, has one
// of links open. Processes whose descriptors cannot be read (another
// user's) hold none of ours.
func holds(pid string, links map[string]struct{}, self int) bool {
	if ppid, ok := parentOf(pid); !ok || ppid == self {
		return false
	}
	dir := "/proc/" + pid + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(64)
		for _, n := range names {
			if link, err := os.Readlink(dir + n); err == nil {
				if _, ok := links[link]; ok {
					return true
				}
			}
		}
		if err != nil {
			return false
		}
	}
}

// parentOf returns the parent pid of process pid from /proc/PID/stat,
// whose second field (the command name, in parentheses) may hold any byte.
func parentOf(pid string) (int, bool) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(stat[i+1:]) // state, ppid, ...
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

func killHolder(pid int, links map[string]struct{}, self int) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	defer p.Release()
	if holds(strconv.Itoa(pid), links, self) {
		_ = p.Signal(syscall.SIGKILL)
	}
}
