package framebatch

import (
	"bufio"
	"bytes"
	"errors"
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

// Send returns without waiting while another goroutine's write is in
// progress; that goroutine writes the frames queued meanwhile in one more
// write before its own Send returns, each whole and exactly once. A failed
// write fails the writing goroutine's Send, drops what is still queued and
// every later call.
func TestSendQueuesBehindWrite(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	w := New(rec)
	first := make(chan error, 1)
	go func() { _, err := w.Send([]byte(`{"n":0}`)); first <- err }()
	<-rec.entered // the first write is in progress and blocked
	const queued = 8
	var seqs []uint64
	for i := 1; i <= queued; i++ {
		seq, err := w.Send([]byte(`{"n":` + strconv.Itoa(i) + `}`)) // returns while the write is blocked
		require.NoError(t, err)
		require.False(t, w.Sent(seq))
		seqs = append(seqs, seq)
	}
	select {
	case err := <-first:
		t.Fatalf("the writing Send returned (%v) before its write ended", err)
	default:
	}
	rec.gate <- struct{}{} // the first write ends: the queued frames go out in one more
	<-rec.entered
	rec.gate <- struct{}{}
	require.NoError(t, <-first)
	for _, seq := range seqs {
		require.True(t, w.Sent(seq))
	}
	require.Len(t, rec.writes, 2)
	require.Equal(t, `{"n":0}`+"\n", string(rec.writes[0]))
	var want []byte
	for i := 1; i <= queued; i++ {
		want = append(want, `{"n":`+strconv.Itoa(i)+"}\n"...)
	}
	require.Equal(t, string(want), string(rec.writes[1]))

	// A write that fails: the writing Send reports it, the frame queued
	// behind it is dropped, later calls fail at once.
	broken := errors.New("broken pipe")
	fail := &failer{entered: make(chan struct{}, 1), gate: make(chan struct{}), err: broken}
	w = New(fail)
	go func() { _, err := w.Send([]byte(`{"n":0}`)); first <- err }()
	<-fail.entered
	seq, err := w.Send([]byte(`{"n":1}`))
	require.NoError(t, err)
	close(fail.gate)
	require.ErrorIs(t, <-first, broken)
	require.False(t, w.Sent(seq), "a frame dropped after a failed write was not sent")
	require.False(t, w.Sent(1), "nor was the frame of the failed write")
	_, err = w.Send([]byte(`{"n":2}`))
	require.ErrorIs(t, err, broken)
	require.ErrorIs(t, w.WriteFrame([]byte(`{"n":3}`)), broken)
	require.Equal(t, 1, fail.calls, "nothing is written after the failed write")
}

// failer fails every Write after announcing it on entered and waiting for
// gate.
type failer struct {
	entered chan struct{}
	gate    chan struct{}
	err     error
	calls   int
}

func (f *failer) Write(p []byte) (int, error) {
	f.calls++
	f.entered <- struct{}{}
	<-f.gate
	return 0, f.err
}
