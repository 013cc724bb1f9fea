package validate

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agenthooks/agenthooks-go/gen/validation"
	"github.com/stretchr/testify/require"
)

// TestLazyLayoutConcurrentEveryFixture validates every fixture message
// (valid and invalid, so the explainer lays out nodes too) and the event of
// each against every $defs entry, from many goroutines at once on fresh
// Validators (Check, Valid and, for some, Scan + CheckDoc), each goroutine walking the work in a different order so that
// first visits of different roots and branches race (run with -race). Every
// error must be the one a warm Validator gives.
func TestLazyLayoutConcurrentEveryFixture(t *testing.T) {
	type job struct {
		ref string
		doc []byte
	}
	var jobs []job
	for _, m := range fixtureMessages(t) {
		jobs = append(jobs, job{m.ref, m.raw})
	}
	refs := fuzzRefs(t)
	for _, m := range fixtureMessages(t)[:min(20, len(fixtureMessages(t)))] {
		for _, r := range refs {
			jobs = append(jobs, job{r, m.raw})
		}
	}
	warm, err := New()
	require.NoError(t, err)
	ctx := context.Background()
	want := make([]error, len(jobs))
	for k, j := range jobs {
		want[k] = warm.Check(ctx, j.ref, j.doc)
	}
	invalid := 0
	for _, err := range want {
		if err != nil {
			invalid++
		}
	}
	t.Logf("%d checks per worker, %d of them invalid (explained)", len(jobs), invalid)
	require.Positive(t, invalid)
	workers := 8
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for range rounds {
		v, err := New()
		require.NoError(t, err)
		start := make(chan struct{})
		var wg sync.WaitGroup
		got := make([][]error, workers)
		for w := range workers {
			got[w] = make([]error, len(jobs))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				off := w * len(jobs) / workers
				for n := range jobs {
					k := (off + n) % len(jobs)
					if w%2 == 1 {
						k = len(jobs) - 1 - k
					}
					got[w][k] = v.Check(ctx, jobs[k].ref, jobs[k].doc)
					_ = v.Valid(jobs[k].ref, jobs[k].doc)
					if n%7 == 0 {
						d := Scan(ctx, jobs[k].doc)
						if err := v.CheckDoc(ctx, jobs[k].ref, d); (err == nil) != (got[w][k] == nil) {
							got[w][k] = fmt.Errorf("CheckDoc disagrees with Check: %v", err)
						}
						d.Release()
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		for w := range workers {
			for k := range jobs {
				require.Equal(t, want[k], got[w][k], "worker %d job %d (%s)", w, k, jobs[k].ref)
			}
		}
	}
}

// TestConstEnumFormsAgainstV6 compares the fast verdict on constants and
// enums written in different forms (numbers 1, 1.0, 1e0, -0; strings with
// escapes, unicode and keyHash collisions) with v6's, both ways.
func TestConstEnumFormsAgainstV6(t *testing.T) {
	// "aXbc", "aYbc", "aZbc", "aWbc" share length, first, middle and last
	// bytes: one keyHash.
	require.Equal(t, keyHash("aXbc"), keyHash("aYbc"))
	require.Equal(t, keyHash("aXbc"), keyHash("aQbc"))
	schemasJSON := []string{
		`{"const":0}`, `{"const":-0}`, `{"const":0.0}`, `{"const":1e0}`, `{"const":1.0}`, `{"const":10e-1}`,
		`{"enum":[1e0,"a"]}`, `{"enum":[-0,"x"]}`, `{"enum":[0.5,5e-1]}`,
		`{"const":"é"}`, `{"const":"\u00e9"}`, `{"const":"a\"b"}`, `{"const":"a\\b"}`, `{"const":"a\/b"}`,
		`{"const":"\ud83d\ude00"}`, `{"const":"😀"}`, `{"const":""}`, `{"const":"\u0000"}`,
		`{"enum":["aXbc","aYbc","aZbc","\u0061Wbc"]}`, `{"enum":["a\nb","😀","\u00e9"]}`, `{"enum":["", "a"]}`,
		`{"const":{"a":1,"b":[1.0]}}`, `{"enum":[{"a":"x"},{"a":"y"}]}`, `{"const":["aXbc","aYbc"]}`,
		`{"const":"\ud800"}`, `{"enum":["\udc00x","a"]}`, `{"const":"\ufffd"}`,
		`{"properties":{"aXbc":{"const":1},"aYbc":{"const":2},"aZbc":{"const":3}},"required":["aYbc"]}`,
	}
	instances := []string{
		`0`, `-0`, `0.0`, `-0.0`, `0e5`, `1`, `1.0`, `1e0`, `10e-1`, `0.5`, `5e-1`, `-1`,
		`"é"`, `"\u00e9"`, `"\u00E9"`, `"e\u0301"`, `"a\"b"`, `"a\\b"`, `"a/b"`, `"a\/b"`, `"😀"`, `"\ud83d\ude00"`,
		`""`, `"\u0000"`, `"a"`, `"x"`, `"aXbc"`, `"aYbc"`, `"aZbc"`, `"aWbc"`, `"aQbc"`, `"\u0061Xbc"`, `"a\u0058bc"`,
		`"a\nb"`, `"a\u000ab"`, `{"a":1,"b":[1]}`, `{"b":[1e0],"a":1.0}`, `{"a":1,"b":[1],"c":0}`, `{"a":"x"}`, `{"a":"\u0078"}`,
		`["aXbc","aYbc"]`, `["aYbc","aXbc"]`, `{"aYbc":2}`, `{"aQbc":2}`, `{"aXbc":1,"aYbc":2,"aZbc":3}`, `{"aXbc":2,"aYbc":2}`,
		`"\ud800"`, `"\udc00x"`, `"\ufffdx"`, `"\ufffd"`, `"�"`,
		`null`, `true`, `[]`, `{}`,
	}
	for i, sj := range schemasJSON {
		sch := compileV6(t, i, sj)
		root, err := compileFast(sch)
		require.NoError(t, err, sj)
		fs := &fastSchema{root: root}
		tp := new(tape)
		for _, ij := range instances {
			inst := mustDecode(t, []byte(ij))
			want := sch.Validate(inst) == nil
			require.Equal(t, want, fs.valid(inst), "schema %s instance %s (value)", sj, ij)
			if !tp.parse([]byte(ij)) {
				// Lone surrogates: strict JSON rejects the document.
				require.Contains(t, ij, `\ud`, ij)
				continue
			}
			valid, decided, _ := fs.verdict(tp, watch{})
			require.True(t, decided, "schema %s instance %s undecided", sj, ij)
			require.Equal(t, want, valid, "schema %s instance %s (tape)", sj, ij)
		}
	}
}

// TestDispatchGuardDiscriminator compares guards and switches with v6 when
// the discriminator is missing, not a string, escaped, colliding in
// keyHash, or the container is not an object.
func TestDispatchGuardDiscriminator(t *testing.T) {
	sig := func(path []string, req bool, leaf string) string {
		s := leaf
		for k := len(path) - 1; k >= 0; k-- {
			r := ""
			if req {
				r = fmt.Sprintf(`"required":[%q],`, path[k])
			}
			s = fmt.Sprintf(`{%s"properties":{%q:%s}}`, r, path[k], s)
		}
		return s
	}
	var schemasJSON []string
	for _, path := range [][]string{{"k"}, {"e", "aXbc"}, {}} {
		for _, req := range []bool{true, false} {
			a, b, c := sig(path, req, `{"const":"aYbc"}`), sig(path, req, `{"enum":["aZbc","b"]}`), sig(path, req, `{"const":"\u00e9"}`)
			schemasJSON = append(schemasJSON,
				fmt.Sprintf(`{"anyOf":[%s,%s,%s]}`, a, b, c),
				fmt.Sprintf(`{"allOf":[{"if":%s,"then":{"required":["t1"]}},{"if":%s,"then":{"required":["t2"]}},{"if":%s,"then":{"required":["t3"]}},{"if":%s,"then":{"maxProperties":1}}]}`, a, b, c, a))
		}
	}
	var instances []string
	for _, v := range []string{`"aYbc"`, `"\u0061Ybc"`, `"aXbc"`, `"aZbc"`, `"b"`, `"é"`, `"\u00e9"`, `1`, `null`, `["aYbc"]`, `{"aYbc":1}`, `true`} {
		for _, tail := range []string{``, `,"t1":1`, `,"t2":1,"t3":1`, `,"t1":1,"t2":1,"t3":1`} {
			instances = append(instances,
				`{"k":`+v+tail+`}`,
				`{"e":{"aXbc":`+v+`}`+tail+`}`,
				`{"e":{"aYbc":`+v+`}`+tail+`}`,
				v)
		}
	}
	instances = append(instances, `{}`, `{"e":1}`, `{"e":null}`, `{"e":{}}`, `{"t1":1}`, `[]`, `"x"`, `{"e":[]}`)
	for i, sj := range schemasJSON {
		sch := compileV6(t, 1000+i, sj)
		root, err := compileFast(sch)
		require.NoError(t, err, sj)
		if strings.HasPrefix(sj, `{"anyOf"`) {
			require.NotNil(t, root.guard, "guard built for %s", sj)
		} else {
			require.NotEmpty(t, root.switches, "switch built for %s", sj)
		}
		fs := &fastSchema{root: root}
		tp := new(tape)
		for _, ij := range instances {
			inst := mustDecode(t, []byte(ij))
			want := sch.Validate(inst) == nil
			require.Equal(t, want, fs.valid(inst), "schema %s instance %s (value)", sj, ij)
			require.True(t, tp.parse([]byte(ij)), ij)
			valid, decided, _ := fs.verdict(tp, watch{})
			require.True(t, decided, "schema %s instance %s undecided", sj, ij)
			require.Equal(t, want, valid, "schema %s instance %s (tape)", sj, ij)
		}
	}
}

func compileV6(t *testing.T, i int, sj string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(sj))
	require.NoError(t, err, sj)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	url := fmt.Sprintf("mem://review%d.json", i)
	require.NoError(t, c.AddResource(url, doc))
	sch, err := c.Compile(url)
	require.NoError(t, err, sj)
	return sch
}

// TestSteadyStateTakesNoLock checks that once a Validator has checked a
// document, checking it again (valid or not, so the explainer too) takes
// neither the Validator's nor its layout lock: both are held by the test
// while it checks, and a visit that took either would block forever (the
// test would time out).
func TestSteadyStateTakesNoLock(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	ctx := context.Background()
	msgs := fixtureMessages(t)
	want := make([]error, len(msgs))
	for k, m := range msgs {
		want[k] = v.Check(ctx, m.ref, m.raw)
		_ = v.Valid(m.ref, m.raw)
	}
	v.mu.Lock()
	v.fastc.mu.Lock()
	defer v.mu.Unlock()
	defer v.fastc.mu.Unlock()
	invalid := 0
	for k, m := range msgs {
		require.Equal(t, want[k], v.Check(ctx, m.ref, m.raw), m.id)
		require.Equal(t, want[k] == nil, v.Valid(m.ref, m.raw), m.id)
		if want[k] != nil {
			invalid++
		}
	}
	require.Positive(t, invalid)
}

// TestProgramPatternsCompile compiles every pattern of the generated
// program itself (what matcher.match compiles on first match, with
// regexp.MustCompile, since the program is trusted), not only the patterns
// written in the schema sources.
func TestProgramPatternsCompile(t *testing.T) {
	n := 0
	for _, doc := range validation.Program().Docs {
		for _, node := range doc.Nodes {
			for _, p := range append([]string{node.Pattern}, node.PatKeys...) {
				if p == "" {
					continue
				}
				_, err := regexp.Compile(p)
				require.NoError(t, err, "%s%s: %q", doc.Name, node.Loc, p)
				n++
			}
		}
	}
	require.Positive(t, n)
}

// BenchmarkSteadyCheckShared measures the steady-state Check of the
// intercept request through one Validator: serial (the baseline) and from
// GOMAXPROCS goroutines at once (parallel); a lock or a contended write on
// the path would make parallel's time per check no better than serial's.
func BenchmarkSteadyCheckShared(b *testing.B) {
	v, err := New()
	require.NoError(b, err)
	var doc []byte
	for _, m := range fixtureMessages(b) {
		if m.ref == "intercept-request.schema.json" && m.valid {
			doc = m.raw
			break
		}
	}
	require.NotNil(b, doc)
	const ref = "intercept-request.schema.json"
	ctx := context.Background()
	require.NoError(b, v.Check(ctx, ref, doc))
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Check(ctx, ref, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := v.Check(ctx, ref, doc); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
