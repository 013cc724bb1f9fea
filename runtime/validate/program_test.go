package validate

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/agenthooks/agenthooks-go/internal/schemaprog"
)

// TestGeneratedProgramLaysOut lays out every node of the generated program,
// which the validator trusts (it lays nodes out on first visit and checks
// neither their keywords nor reference cycles ahead): every node must be
// modelled, and no reference target may reach itself in place.
func TestGeneratedProgramLaysOut(t *testing.T) {
	p := validation.Program()
	c := newFastCompiler(p)
	require.True(t, c.trusted)
	c.mu.Lock()
	defer c.mu.Unlock()
	for d, doc := range p.Docs {
		for i, n := range doc.Nodes {
			id := schemaprog.MakeID(d, i)
			fn, err := c.shell(id)
			require.NoError(t, err, "%s%s", doc.Name, n.Loc)
			require.NoError(t, c.layOut(fn), "%s%s", doc.Name, n.Loc)
			if refTarget(n.Loc) {
				require.NoError(t, inPlaceCycle(p, id), "%s%s", doc.Name, n.Loc)
			}
		}
	}
}

// TestProgramConstantsCanonical checks that the program's constants are
// written as the explainer reports them (Error.Allowed holds the text of
// each allowed value as jsonText writes it, cut out of the program's
// canonical JSON without decoding it).
func TestProgramConstantsCanonical(t *testing.T) {
	p := validation.Program()
	seen := 0
	for _, doc := range p.Docs {
		for _, n := range doc.Nodes {
			if n.Const != "" {
				v, err := decodeConst(n.Const)
				require.NoError(t, err)
				require.Equal(t, jsonText(v), n.Const, "%s%s", doc.Name, n.Loc)
				seen++
			}
			if n.Enum != "" {
				v, err := decodeConst(n.Enum)
				require.NoError(t, err)
				vals, ok := v.([]any)
				require.True(t, ok)
				want := make([]string, len(vals))
				for k, e := range vals {
					want[k] = jsonText(e)
				}
				require.Equal(t, want, elements(n.Enum), "%s%s", doc.Name, n.Loc)
				seen++
			}
		}
	}
	require.Greater(t, seen, 100)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`[]`, []string{}},
		{`["a"]`, []string{`"a"`}},
		{`["a,b","c\"]",1,null]`, []string{`"a,b"`, `"c\"]"`, `1`, `null`}},
		{`[[1,2],{"a":[3,"]"]},"x"]`, []string{`[1,2]`, `{"a":[3,"]"]}`, `"x"`}},
	} {
		require.Equal(t, tc.want, elements(tc.in), tc.in)
	}
}

// TestLazyLayoutConcurrent starts many first validations of a fresh
// Validator at once (run with -race): nodes laid out by one are seen whole
// by the others, and every verdict is the one a warm Validator gives.
func TestLazyLayoutConcurrent(t *testing.T) {
	files := []struct{ ref, path string }{
		{"intercept-request.schema.json", "intercept-request.valid.json"},
		{"observe-notification.schema.json", "model-request-text-attachment.valid.json"},
		{"intercept-response.schema.json", "inject-wrong-operation.invalid.json"},
	}
	docs := make([][]byte, len(files))
	warm, err := New()
	require.NoError(t, err)
	want := make([]error, len(files))
	for k, f := range files {
		docs[k], err = os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", f.path))
		require.NoError(t, err)
		want[k] = warm.Check(context.Background(), f.ref, docs[k])
	}
	for range 4 {
		v, err := New()
		require.NoError(t, err)
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 3*len(files))
		for g := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				k := g % len(files)
				errs[g] = v.Check(context.Background(), files[k].ref, docs[k])
			}()
		}
		close(start)
		wg.Wait()
		for g, err := range errs {
			require.Equal(t, want[g%len(files)], err, files[g%len(files)].path)
		}
	}
}

// maxFirstCheckAllocs bounds the allocations of a fresh Validator's first
// Check of the intercept request: the nodes the validation visits, laid out
// on first visit (11,131 allocations, 2.8 MB, when every node the reference
// reaches was laid out ahead).
const maxFirstCheckAllocs = 250

// TestFirstCheckAllocs holds the first validation of a process to the
// nodes it visits, beside the steady state (a Validator that has checked
// the same request before, which allocates nothing).
func TestFirstCheckAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled tapes")
	}
	doc, err := os.ReadFile(filepath.Join(fastTestdata, "fixtures", "draft", "http", "intercept-request.valid.json"))
	require.NoError(t, err)
	const ref = "intercept-request.schema.json"
	ctx := context.Background()
	first := testing.AllocsPerRun(5, func() {
		v, err := New()
		require.NoError(t, err)
		require.NoError(t, v.Check(ctx, ref, doc))
	})
	v, err := New()
	require.NoError(t, err)
	require.NoError(t, v.Check(ctx, ref, doc))
	steady := testing.AllocsPerRun(20, func() { require.NoError(t, v.Check(ctx, ref, doc)) })
	t.Logf("first Check: %.0f allocations; steady: %.0f", first, steady)
	require.LessOrEqual(t, first, float64(maxFirstCheckAllocs))
	require.Zero(t, steady)
}
