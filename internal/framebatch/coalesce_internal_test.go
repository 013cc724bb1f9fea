package framebatch

import (
	"bufio"
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder records every Write call; each Write announces itself on
// entered and then waits for gate.
type recorder struct {
	mu      sync.Mutex
	writes  [][]byte
	gate    chan struct{}
	entered chan struct{}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.entered <- struct{}{}
	<-r.gate
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Frames queued while a write is blocked go out together in the next
// write, each whole and exactly once.
func TestCoalescesWaitingFrames(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	w := New(rec)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); require.NoError(t, w.WriteFrame([]byte(`{"n":0}`))) }()
	<-rec.entered // the first write is in progress and blocked
	const waiting = 8
	for i := 1; i <= waiting; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, w.WriteFrame([]byte(`{"n":`+strconv.Itoa(i)+`}`)))
		}()
	}
	// Wait until every frame is queued behind the blocked write, then let
	// the writes through until all are done.
	for {
		w.mu.Lock()
		q := w.queued
		w.mu.Unlock()
		if q == waiting+1 {
			break
		}
		runtime.Gosched()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for open := true; open; {
		select {
		case rec.gate <- struct{}{}:
		case <-rec.entered:
		case <-done:
			open = false
		}
	}
	var lines []string
	for _, b := range rec.writes {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		require.Equal(t, byte('\n'), b[len(b)-1], "a write ends with a whole frame")
	}
	require.Len(t, lines, waiting+1)
	seen := map[string]bool{}
	for _, l := range lines {
		require.False(t, seen[l], "frame %s written twice", l)
		seen[l] = true
	}
	require.Len(t, rec.writes, 2, "the frames waiting behind the first write went out in one")
}
