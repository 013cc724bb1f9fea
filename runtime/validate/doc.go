// Package validate checks Agent Hooks Protocol documents against the
// canonical JSON Schemas embedded by package schemas.
//
// A [Validator] compiles every embedded schema document once (JSON Schema
// draft 2020-12, with format assertions enabled) and resolves every $ref
// inside the embedded set; it never reads files or touches the network.
// Documents can be validated against a whole schema document or against any
// definition inside one, named by a reference such as
//
//	intercept-request.schema.json
//	effect.schema.json#/$defs/InjectEffect
//	https://agenthooksprotocol.org/schemas/draft/effect.schema.json#/$defs/InjectEffect
//
// Validation failures are reported as [*Error] values that name the schema,
// the JSON pointer of the failing instance location and the failing keyword,
// and say what is wrong: the missing members of a "required" failure, the
// unexpected members of an "additionalProperties" failure, and the allowed
// values (taken from the schema) of a "const" or "enum" failure. They never
// contain instance values or the input bytes, because protocol
// messages routinely carry secrets such as tokens or file contents. Note that
// a JSON pointer consists of property names taken from the instance.
//
// A Validator is immutable once built and safe for concurrent use.
// [Default] returns a lazily built shared instance.
package validate
