package hooks

import (
	"time"
	"unsafe"
)

// builtTimed is built with room for the event's time, when the SDK
// formats it (eventTimeIn): the time is then part of the event's own
// allocation rather than one of its own.
type builtTimed[T any] struct {
	built[T]
	time [30]byte // "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" at most
}

// newBuilt allocates the event and payload of an event of payload type T,
// with room for its time (returned, nil without) when that room is in the
// allocation's size class anyway: the time then costs neither an
// allocation nor a byte.
func newBuilt[T any]() (*built[T], *[30]byte) {
	if sizeClass(unsafe.Sizeof(builtTimed[T]{})) == sizeClass(unsafe.Sizeof(built[T]{})) {
		b := new(builtTimed[T])
		return &b.built, &b.time
	}
	return new(built[T]), nil
}

// sizeClasses are the sizes the Go runtime allocates small objects in, up
// to 2048 bytes (TestSizeClasses compares them with the runtime's).
var sizeClasses = [...]uint16{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048}

// classBy8 is the size class of every size up to 2048 bytes, by 8 bytes:
// classBy8[(n+7)/8] (immutable once computed).
var classBy8 = func() (t [2048/8 + 1]uint16) {
	c := 0
	for i := range t {
		for int(sizeClasses[c]) < i*8 {
			c++
		}
		t[i] = sizeClasses[c]
	}
	return t
}()

// sizeClass returns the size the runtime allocates an object of n bytes
// in, or n beyond the table.
func sizeClass(n uintptr) uintptr {
	if n > 2048 {
		return n
	}
	return uintptr(classBy8[(n+7)/8])
}

// eventTimeIn is eventTime for an event with room buf for its time (nil
// for none, see newBuilt): the current time formatted from the clock's
// last second is written into buf, which is never written again, and
// returned as a string of buf's bytes.
func (f *fill) eventTimeIn(buf *[30]byte, t time.Time) string {
	if buf != nil && t.IsZero() && f.h != nil {
		if n, ok := f.h.clock.formatCached(buf, time.Now()); ok {
			s := unsafe.String(&buf[0], n)
			f.sdk.time = s
			return s
		}
	}
	return f.eventTime(t)
}
