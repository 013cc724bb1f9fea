package interop

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
)

var corpusPath = filepath.Join("..", "..", "testdata", "interop", "scenarios.json")

// requiredFamilies are the tag families the corpus must cover (interop
// README "Coverage"), each matched by tag prefix.
var requiredFamilies = []string{
	"no-effect", "precedence", "permission-state", "candidate-state", "omitted-state",
	"modify-replace", "modify-merge", "modify-nested", "modify-null",
	"return", "return-falsy", "flow-stop", "flow-continue", "continuation-allowance",
	"inject", "inject-deliver-at", "turn.finish.before",
	"schema-invalid", "correlation-invalid", "capability-invalid", "application-invalid",
}

var negativeTags = []string{"schema-invalid", "correlation-invalid", "capability-invalid", "application-invalid"}

func TestCorpusIsCanonical(t *testing.T) {
	f, err := LoadScenarios(corpusPath)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(f.Scenarios), 60)
	v := validate.Default()
	counts := map[string]int{}
	for _, sc := range f.Scenarios {
		t.Run(sc.ID, func(t *testing.T) {
			req, err := gen.ParseInterceptRequest(sc.Request)
			require.NoError(t, err, "request must be canonically valid")
			id, ok := req.ID.AsString()
			require.True(t, ok)
			require.Equal(t, sc.ID, id)
			require.Equal(t, sc.ID, req.Params.Event.ID())
			info, ok := gen.LookupEvent(gen.EventName(req.Params.Event.Type()))
			require.True(t, ok)
			require.NoError(t, v.Validate(info.CapabilitySchema, mustMarshal(t, req.Params.Capabilities)))

			neg := ""
			for _, tag := range sc.Tags {
				counts[tag]++
				for _, n := range negativeTags {
					if tag == n {
						require.Empty(t, neg, "one negative class per row")
						neg = tag
					}
				}
			}
			generic := v.Validate("intercept-response.schema.json", sc.Response)
			boundary := v.Validate(info.ResponseSchema, sc.Response)
			switch neg {
			case "":
				require.False(t, sc.ExpectError)
				require.NoError(t, generic)
				require.NoError(t, boundary)
				var exp map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(sc.Expected, &exp))
				for _, k := range []string{"decision", "executed", "messages"} {
					require.Contains(t, exp, k)
				}
			case "schema-invalid":
				require.True(t, sc.ExpectError)
				require.Error(t, generic, "schema-negative responses fail the canonical schema")
			case "application-invalid", "correlation-invalid":
				require.True(t, sc.ExpectError)
				require.NoError(t, generic)
				require.NoError(t, boundary)
			case "capability-invalid":
				require.True(t, sc.ExpectError)
				require.NoError(t, generic)
			}
			if sc.ExpectError {
				require.NotEmpty(t, sc.HostExpected, "negative rows state the host state that must survive")
			}
		})
	}
	fams := make([]string, 0, len(counts))
	for k := range counts {
		fams = append(fams, k)
	}
	sort.Strings(fams)
	var b strings.Builder
	for _, k := range fams {
		fmt.Fprintf(&b, "%s=%d ", k, counts[k])
	}
	t.Logf("scenarios=%d tags: %s", len(f.Scenarios), b.String())
	for _, fam := range requiredFamilies {
		require.Positive(t, counts[fam], "family %s", fam)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
