// Package validate checks Agent Hooks Protocol documents against the
// canonical JSON Schemas embedded by package schemas.
//
// A [Validator] runs the validation program that cmd/ahp-codegen generates
// from the schemas (package gen/validation: every root document and $defs
// entry, compiled at generation time by jsonschema/v6 with format
// assertions on, draft 2020-12); nothing is compiled from schema JSON at run
// time, and jsonschema/v6 is not linked into programs using this package.
// Tests keep v6 as the oracle: verdicts and errors are held to those v6
// gave. Documents can be validated against a whole schema document or
// against any subschema of the program, named by a reference such as
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
