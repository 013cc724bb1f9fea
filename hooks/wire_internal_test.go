package hooks

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
)

// TestSizeClasses: the size classes newBuilt assumes are the runtime's.
func TestSizeClasses(t *testing.T) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var got []uint16
	for _, c := range ms.BySize {
		if c.Size > 0 && c.Size <= 2048 {
			got = append(got, uint16(c.Size))
		}
	}
	require.Equal(t, sizeClasses[:], got)
}

// TestWireTimeInEvent: a tool.before built with the current time holds
// its time in its own allocation (the time costs no allocation), the time
// is what formatUTC writes for it, the entry check recognises it as the
// SDK's, and a later event does not change it.
func TestWireTimeInEvent(t *testing.T) {
	_, tb := newBuilt[gen.ToolBeforeEvent]()
	require.NotNil(t, tb, "tool.before has room for its time in its size class")
	h := &Hooks{}
	in := ToolBeforeInput{ID: "e1", Name: "n", Input: json.RawMessage(`{}`), Origin: gen.ExecutionEventToolOriginNative, CallID: "c", Path: "p"}
	var ev *gen.Event
	var f fill
	allocs := testing.AllocsPerRun(200, func() {
		f = fill{source: "urn:s", h: h}
		var err error
		ev, err = in.wire(&f)
		if err != nil {
			t.Fatal(err)
		}
	})
	// The event with its payload and time, and the copy of the input.
	// (A run in a new second formats and keeps that second: one more.)
	require.LessOrEqual(t, allocs, 2.1)
	s := ev.ToolBefore.Time
	require.True(t, f.sdk.isTime(s))
	base := uintptr(unsafe.Pointer(ev))
	require.True(t, uintptr(unsafe.Pointer(unsafe.StringData(s))) >= base &&
		uintptr(unsafe.Pointer(unsafe.StringData(s))) < base+unsafe.Sizeof(builtTimed[gen.ToolBeforeEvent]{}), "the time is in the event's allocation")
	parsed, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	want, own := formatUTC(parsed)
	require.True(t, own)
	require.Equal(t, want, s)
	kept := string([]byte(s))
	for range 100 {
		_, err := in.wire(&fill{source: "urn:s", h: h})
		require.NoError(t, err)
	}
	require.Equal(t, kept, s)

	// A given time is the input's, not the clock's.
	in.Time = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	ev, err = in.wire(&fill{source: "urn:s", h: h})
	require.NoError(t, err)
	require.Equal(t, "2026-01-02T03:04:05.000000006Z", ev.ToolBefore.Time)
}

// TestNewBuiltCostsNothing: newBuilt adds room for the time only where
// the allocation's size class has it.
func TestNewBuiltCostsNothing(t *testing.T) {
	check := func(plain, timed uintptr, room bool) {
		t.Helper()
		require.Equal(t, room, sizeClass(plain) == sizeClass(timed), "plain %d, timed %d", plain, timed)
	}
	_, tb := newBuilt[gen.ToolBeforeEvent]()
	check(unsafe.Sizeof(built[gen.ToolBeforeEvent]{}), unsafe.Sizeof(builtTimed[gen.ToolBeforeEvent]{}), tb != nil)
	_, tb = newBuilt[gen.ToolAfterEvent]()
	check(unsafe.Sizeof(built[gen.ToolAfterEvent]{}), unsafe.Sizeof(builtTimed[gen.ToolAfterEvent]{}), tb != nil)
	_, tb = newBuilt[gen.SessionStartEvent]()
	check(unsafe.Sizeof(built[gen.SessionStartEvent]{}), unsafe.Sizeof(builtTimed[gen.SessionStartEvent]{}), tb != nil)
	for n := uintptr(0); n <= 2100; n++ {
		want := n
		for _, c := range sizeClasses {
			if n <= uintptr(c) {
				want = uintptr(c)
				break
			}
		}
		require.Equal(t, want, sizeClass(n), "%d bytes", n)
	}
}
