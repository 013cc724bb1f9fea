package framebatch

import (
	"bytes"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Send must not let the queue behind a blocked write follow the peer: a
// stream whose reader has stopped (ServeStdio's host not reading stdout)
// would otherwise queue every answer a busy sender produces, without
// bound. Past maxQueued bytes, Send waits for its frame's write as
// WriteFrame does; every frame still goes out once, whole and in order.
func TestSendQueueBounded(t *testing.T) {
	rec := &recorder{gate: make(chan struct{}), entered: make(chan struct{}, 1024)}
	w := New(rec)
	frame := func(i int) []byte {
		return []byte(`{"n":` + strconv.Itoa(i) + `,"pad":"` + string(bytes.Repeat([]byte{'x'}, 1000)) + `"}`)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); require.NoError(t, w.WriteFrame(frame(0))) }()
	<-rec.entered // the first write is in progress and blocked

	waited := make(chan struct{})
	var once sync.Once
	w.sendWait = func() { once.Do(func() { close(waited) }) }
	const sends = 1000 // ~1 MB if all were queued
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 1; i <= sends; i++ {
			_, err := w.Send(frame(i))
			require.NoError(t, err)
		}
	}()
	select {
	case <-sent:
		w.mu.Lock()
		n := len(w.queue)
		w.mu.Unlock()
		t.Fatalf("%d Sends returned behind one blocked write, %d bytes queued: the queue follows the peer", sends, n)
	case <-waited:
	}
	w.mu.Lock()
	require.LessOrEqual(t, len(w.queue), maxQueued+len(frame(sends))+1)
	w.mu.Unlock()

	done := make(chan struct{})
	go func() { wg.Wait(); <-sent; close(done) }()
	for open := true; open; {
		select {
		case rec.gate <- struct{}{}:
		case <-rec.entered:
		case <-done:
			open = false
		}
	}
	var want bytes.Buffer
	for i := 0; i <= sends; i++ {
		want.Write(frame(i))
		want.WriteByte('\n')
	}
	require.Equal(t, want.String(), string(bytes.Join(rec.writes, nil)))
}
