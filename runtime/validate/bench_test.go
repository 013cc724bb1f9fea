package validate_test

import (
	"encoding/json"
	"testing"
)

// benchFixture is the largest valid observe notification fixture.
const benchFixture = "fixtures/draft/http/model-request-text-attachment.valid.json"

// BenchmarkValidateObserveNotification measures Validate (strict decode
// plus schema validation) of an observe notification.
func BenchmarkValidateObserveNotification(b *testing.B) {
	v := newValidator(b)
	doc := readFixture(b, benchFixture)
	const ref = "observe-notification.schema.json"
	if err := v.Validate(ref, doc); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(ref, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateInterceptRequest measures Validate of an intercept
// request.
func BenchmarkValidateInterceptRequest(b *testing.B) {
	v := newValidator(b)
	doc := readFixture(b, "fixtures/draft/http/intercept-request.valid.json")
	const ref = "intercept-request.schema.json"
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(ref, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateInvalid measures the failure path, including the
// construction of the *Error.
func BenchmarkValidateInvalid(b *testing.B) {
	v := newValidator(b)
	doc := readFixture(b, "fixtures/draft/http/inject-wrong-operation.invalid.json")
	const ref = "intercept-response.schema.json"
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(ref, doc); err == nil {
			b.Fatal("want error")
		}
	}
}

// BenchmarkJSONUnmarshalBaseline is the baseline for
// BenchmarkValidateObserveNotification: decoding the same bytes into a
// map[string]any with encoding/json.
func BenchmarkJSONUnmarshalBaseline(b *testing.B) {
	doc := readFixture(b, benchFixture)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			b.Fatal(err)
		}
	}
}
