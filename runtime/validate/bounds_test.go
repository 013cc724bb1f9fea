package validate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadsOnlyTheDocument: validation reads the bytes of the document it
// is given, never the capacity of the caller's slice past them, which the
// caller may be writing meanwhile (the next message appended to the same
// buffer, say). Short names near the end of a document are compared as
// words; the race detector (the -race run) sees any such read of bytes
// past the document, which the other goroutine writes.
func TestReadsOnlyTheDocument(t *testing.T) {
	_, fs := testSchema(t, `{"properties":{"ab":{"const":"xy"},"k":{"enum":["p","q"]}},"required":["ab"]}`)
	v := Default()
	for _, tc := range []struct {
		doc   string
		valid func([]byte) bool
	}{
		// Each member in the property table (and the const, the enum).
		{`{"k":"p","ab":"xy"}`, func(b []byte) bool {
			tp := new(tape)
			return tp.parse(b) && fs.validTape(tp)
		}},
		// Properties looked up in the instance.
		{`{"k":"q","zz":1,"ab":"xy"}`, func(b []byte) bool {
			tp := new(tape)
			return tp.parse(b) && fs.validTape(tp)
		}},
		// The shipped program, from a Doc and from Validate.
		{`{"id":"s","agent":{"id":"a"}}`, func(b []byte) bool {
			d := Scan(context.Background(), b)
			defer d.Release()
			return v.CheckDoc(context.Background(), "common.schema.json#/$defs/session", d) == nil &&
				v.Validate("common.schema.json#/$defs/session", b) == nil
		}},
	} {
		buf := make([]byte, len(tc.doc), len(tc.doc)+32)
		copy(buf, tc.doc)
		spare := buf[len(tc.doc):cap(buf)]
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			for i := range spare {
				spare[i] = 'z'
			}
		}()
		require.True(t, tc.valid(buf), tc.doc)
		<-wrote
	}
}

// TestReleaseTwice: a Doc released twice goes back to the pool once, so
// that two later scans never share one Doc (and one tape).
func TestReleaseTwice(t *testing.T) {
	ctx := context.Background()
	d := Scan(ctx, []byte(`{"a":1}`))
	d.Release()
	d.Release()
	a := Scan(ctx, []byte(`{"b":2}`))
	defer a.Release()
	b := Scan(ctx, []byte(`[3]`))
	defer b.Release()
	require.NotSame(t, a, b)
	require.Equal(t, []byte(`2`), a.Text(2))
	require.Equal(t, byte('['), b.First(0))
}
