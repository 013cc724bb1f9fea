package jsonrpc

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIDConstructors(t *testing.T) {
	tests := []struct {
		name                          string
		id                            ID
		wantText                      string
		zero, null, isString, integer bool
	}{
		{name: "absent", id: ID{}, wantText: "<absent>", zero: true},
		{name: "null", id: NullID(), wantText: "null", null: true},
		{name: "string", id: StringID("evt_1"), wantText: `"evt_1"`, isString: true},
		{name: "string escapes", id: StringID("a\"b\\c\n\x01\u2028"), wantText: `"a\"b\\c\n\u0001\u2028"`, isString: true},
		{name: "string invalid utf8", id: StringID("a\xffb"), wantText: `"a\ufffdb"`, isString: true},
		{name: "string one", id: StringID("1"), wantText: `"1"`, isString: true},
		{name: "int", id: IntID(42), wantText: "42", integer: true},
		{name: "int zero", id: IntID(0), wantText: "0", integer: true},
		{name: "int negative", id: IntID(-3), wantText: "-3", integer: true},
		{name: "int min", id: IntID(math.MinInt64), wantText: "-9223372036854775808", integer: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.wantText, tc.id.String())
			require.Equal(t, tc.zero, tc.id.IsZero())
			require.Equal(t, tc.null, tc.id.IsNull())
			require.Equal(t, tc.isString, tc.id.IsString())
			require.Equal(t, tc.integer, tc.id.IsInteger())
			if !tc.zero {
				b, err := json.Marshal(tc.id)
				require.NoError(t, err)
				require.Equal(t, tc.wantText, string(b))
				var back ID
				require.NoError(t, json.Unmarshal(b, &back))
				require.Equal(t, tc.id, back)
				require.True(t, back.Equal(tc.id))
			}
		})
	}
}

func TestIDUnmarshal(t *testing.T) {
	tests := []struct {
		in      string
		want    string // exact text kept; empty when an error is expected
		wantErr error
	}{
		{in: `"abc"`, want: `"abc"`},
		{in: `"\u0061bc"`, want: `"\u0061bc"`},
		{in: `"\ud83d\ude00"`, want: `"\ud83d\ude00"`},
		{in: ` "x" `, want: `"x"`},
		{in: `1`, want: `1`},
		{in: `-3`, want: `-3`},
		{in: `0`, want: `0`},
		{in: `-0`, want: `-0`},
		{in: `123456789012345678901234567890`, want: `123456789012345678901234567890`},
		{in: `null`, want: `null`},
		{in: `""`, wantErr: ErrInvalidID},
		{in: `1.5`, wantErr: ErrInvalidID},
		{in: `1.0`, wantErr: ErrInvalidID},
		{in: `1e2`, wantErr: ErrInvalidID},
		{in: `1E0`, wantErr: ErrInvalidID},
		{in: `-0.0`, wantErr: ErrInvalidID},
		{in: `true`, wantErr: ErrInvalidID},
		{in: `false`, wantErr: ErrInvalidID},
		{in: `{}`, wantErr: ErrInvalidID},
		{in: `[1]`, wantErr: ErrInvalidID},
		{in: `01`, wantErr: ErrParse},
		{in: `+1`, wantErr: ErrParse},
		{in: `"a`, wantErr: ErrParse},
		{in: `"a" "b"`, wantErr: ErrParse},
		{in: ``, wantErr: ErrParse},
		{in: "\"\xff\"", wantErr: ErrParse},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			id := StringID("keep")
			err := id.UnmarshalJSON([]byte(tc.in))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, StringID("keep"), id, "id must be unchanged on error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, id.String())
			b, err := id.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b), "exact text must round-trip")
		})
	}
}

func TestIDUnmarshalInStruct(t *testing.T) {
	var v struct {
		ID    ID `json:"id"`
		Other ID `json:"other,omitzero"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"id":null}`), &v))
	require.True(t, v.ID.IsNull())
	require.True(t, v.Other.IsZero())
	require.NoError(t, json.Unmarshal([]byte(`{"id":"a"}`), &v))
	require.Equal(t, StringID("a"), v.ID)
	require.Error(t, json.Unmarshal([]byte(`{"id":1.5}`), &v))

	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"a"}`, string(b))

	_, err = json.Marshal(struct{ ID ID }{})
	require.ErrorIs(t, err, ErrInvalidID, "an absent id must not silently become null")
	_, err = json.Marshal(StringID(""))
	require.ErrorIs(t, err, ErrInvalidID)
}

func mustID(t *testing.T, text string) ID {
	t.Helper()
	var id ID
	require.NoError(t, id.UnmarshalJSON([]byte(text)))
	return id
}

func TestIDEqual(t *testing.T) {
	tests := []struct {
		a, b ID
		want bool
	}{
		{a: StringID("1"), b: IntID(1), want: false},
		{a: IntID(1), b: StringID("1"), want: false},
		{a: StringID("a"), b: StringID("a"), want: true},
		{a: StringID("a"), b: mustID(t, `"\u0061"`), want: true},
		{a: mustID(t, `"\/"`), b: StringID("/"), want: true},
		{a: StringID("a"), b: StringID("b"), want: false},
		{a: mustID(t, `"\u0061"`), b: StringID("b"), want: false},
		{a: IntID(1), b: IntID(1), want: true},
		{a: IntID(1), b: IntID(2), want: false},
		{a: IntID(0), b: mustID(t, `-0`), want: true},
		{a: mustID(t, `99999999999999999999`), b: mustID(t, `99999999999999999999`), want: true},
		{a: mustID(t, `99999999999999999999`), b: mustID(t, `99999999999999999998`), want: false},
		{a: NullID(), b: NullID(), want: true},
		{a: NullID(), b: ID{}, want: false},
		{a: NullID(), b: StringID("null"), want: false},
		{a: ID{}, b: ID{}, want: true},
		{a: ID{}, b: IntID(0), want: false},
		{a: StringID(""), b: ID{}, want: false},
	}
	for i, tc := range tests {
		t.Run(strconv.Itoa(i)+"_"+tc.a.String()+"_"+tc.b.String(), func(t *testing.T) {
			require.Equal(t, tc.want, tc.a.Equal(tc.b))
			require.Equal(t, tc.want, tc.b.Equal(tc.a), "Equal must be symmetric")
		})
	}
}

func TestIDValues(t *testing.T) {
	tests := []struct {
		id      ID
		n       int64
		nOK     bool
		s       string
		sOK     bool
		display string
	}{
		{id: IntID(7), n: 7, nOK: true, display: "7"},
		{id: IntID(math.MaxInt64), n: math.MaxInt64, nOK: true, display: "9223372036854775807"},
		{id: IntID(math.MinInt64), n: math.MinInt64, nOK: true, display: "-9223372036854775808"},
		{id: mustID(t, `9223372036854775808`), display: "9223372036854775808"},
		{id: mustID(t, `-9223372036854775809`), display: "-9223372036854775809"},
		{id: mustID(t, `"\u00e9t\u00e9"`), s: "été", sOK: true, display: `"\u00e9t\u00e9"`},
		{id: StringID("x"), s: "x", sOK: true, display: `"x"`},
		{id: NullID(), display: "null"},
		{id: ID{}, display: "<absent>"},
	}
	for _, tc := range tests {
		t.Run(tc.display, func(t *testing.T) {
			n, ok := tc.id.Int64()
			require.Equal(t, tc.nOK, ok)
			require.Equal(t, tc.n, n)
			s, ok := tc.id.StringValue()
			require.Equal(t, tc.sOK, ok)
			require.Equal(t, tc.s, s)
			require.Equal(t, tc.display, tc.id.String())
		})
	}
}
