package validate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/schemas"
)

func TestPointer(t *testing.T) {
	require.Equal(t, "", pointer(nil))
	require.Equal(t, "/a/0", pointer([]string{"a", "0"}))
	require.Equal(t, "/a~1b/c~0d/~01", pointer([]string{"a/b", "c~d", "~1"}))
	require.Equal(t, "/", pointer([]string{""}))
}

func TestDisplayPointer(t *testing.T) {
	require.Equal(t, "(root)", displayPointer(""))
	require.Equal(t, "/a/b", displayPointer("/a/b"))
	require.Equal(t, `"/a\nforged: line"`, displayPointer("/a\nforged: line"))
}

func TestSchemaCompiledOncePerRef(t *testing.T) {
	v, err := New()
	require.NoError(t, err)

	const ref = "effect.schema.json#/$defs/InjectEffect"
	_, uncached := v.fast.Load(ref)
	require.False(t, uncached)

	key1, s1, err := v.schema(ref)
	require.NoError(t, err)
	key2, s2, err := v.schema(schemas.BaseURI + ref)
	require.NoError(t, err)
	require.Equal(t, ref, key1)
	require.Equal(t, ref, key2)
	require.Same(t, s1, s2)
	key3, s3, err := v.schema(ref) // from the cache of references as given
	require.NoError(t, err)
	require.Equal(t, ref, key3)
	require.Same(t, s1, s3)

	// Nothing is laid out before its first use.
	for _, name := range schemas.Documents() {
		_, ok := v.fast.Load(name)
		require.False(t, ok, name)
	}

	// Failures are not cached.
	_, _, err = v.schema("effect.schema.json#/$defs/Nope")
	require.ErrorIs(t, err, ErrUnknownSchema)
	_, ok := v.fast.Load("effect.schema.json#/$defs/Nope")
	require.False(t, ok)
	_, ok = v.refs.Load("effect.schema.json#/$defs/Nope")
	require.False(t, ok)
}

func TestFailedValidator(t *testing.T) {
	cause := errors.New("compile failed")
	v := &Validator{err: cause}
	require.ErrorIs(t, v.Validate("effect.schema.json", []byte(`{}`)), cause)
	require.ErrorIs(t, v.ValidateValue("effect.schema.json", nil), cause)
}

func TestDecodeKeepsNumbers(t *testing.T) {
	v, derr := decode([]byte(`{"n": 12345678901234567890.000, "f": 1e400}`))
	require.Nil(t, derr)
	m := v.(map[string]any)
	require.Equal(t, json.Number("12345678901234567890.000"), m["n"])
	require.Equal(t, json.Number("1e400"), m["f"])
}
