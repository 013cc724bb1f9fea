package hooks

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
)

// benchPrompt is a turn.start event whose one message has n text parts of
// size bytes each.
func benchPrompt(n, size int) *gen.Event {
	parts := make([]gen.ContentItem, n)
	text := strings.Repeat("lorem ipsum ", size/12+1)[:size]
	for i := range parts {
		parts[i] = gen.ContentItem{TextBodyPart: &gen.TextBodyPart{ID: "p" + strconv.Itoa(i), Text: text}}
	}
	return &gen.Event{TurnStart: &gen.ExecutionEventTurnStart{ID: "evt", Source: "urn:test:harness", Time: "2026-01-01T00:00:00Z", Type: "turn.start",
		Items: []gen.CanonicalMessage{{ID: "m", Role: gen.CanonicalMessageRoleUser, Parts: parts}}, Turn: gen.ExecutionEventTurn{ID: "t"}, Trigger: "user"}}
}

// BenchmarkProjection: the projection of a 100-part message for a metadata
// receiver (every text part becomes its metadata view, with its size, as
// in every delivery), beside the baseline of
// encoding the same event once, which every delivery does anyway. The
// projection of a body receiver (nothing to change) is shown too.
func BenchmarkProjection(b *testing.B) {
	for _, size := range []int{64, 1024} {
		ev := benchPrompt(100, size)
		meta, err := newContentPolicy(gen.ContentSelection{Default: "metadata"})
		if err != nil {
			b.Fatal(err)
		}
		body, err := newContentPolicy(gen.ContentSelection{Default: "body"})
		if err != nil {
			b.Fatal(err)
		}
		name := "text=" + strconv.Itoa(size) + "B"
		b.Run(name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := gen.EncodeEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/project-metadata", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v := project(ev, meta); v == ev {
					b.Fatal("nothing projected")
				}
			}
		})
		b.Run(name+"/project-body", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v := project(ev, body); v != ev {
					b.Fatal("a body view changed")
				}
			}
		})
	}
}

// BenchmarkProjectionRatio interleaves the two sides of
// BenchmarkProjection op by op, so that both run under the same
// load of a shared machine, and reports the ratio of projecting for a
// metadata receiver to encoding the event (target: at most 1.5).
func BenchmarkProjectionRatio(b *testing.B) {
	for _, size := range []int{64, 1024} {
		b.Run("text="+strconv.Itoa(size)+"B", func(b *testing.B) {
			ev := benchPrompt(100, size)
			meta, err := newContentPolicy(gen.ContentSelection{Default: "metadata"})
			if err != nil {
				b.Fatal(err)
			}
			var enc, proj time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := gen.EncodeEvent(ev); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if v := project(ev, meta); v == ev {
					b.Fatal("nothing projected")
				}
				proj += time.Since(t1)
				enc += t1.Sub(t0)
			}
			b.ReportMetric(float64(enc.Nanoseconds())/float64(b.N), "encode-ns/op")
			b.ReportMetric(float64(proj.Nanoseconds())/float64(b.N), "project-ns/op")
			b.ReportMetric(float64(proj)/float64(enc), "project/encode")
		})
	}
}
