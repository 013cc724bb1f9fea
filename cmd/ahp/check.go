package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agenthooks/agenthooks-go/hooks"
	"github.com/agenthooks/agenthooks-go/runtime/validate"
	"github.com/agenthooks/agenthooks-go/schemas"
)

// maxDocumentBytes bounds one document read by check and probe.
const maxDocumentBytes = 64 << 20

const registrationSchema = "registration.schema.json"

// problem is one reason a document is invalid.
type problem struct {
	Pointer string `json:"pointer"`
	// Keyword is the failed schema keyword or load-time check.
	Keyword string `json:"keyword"`
	// Member names the missing or unexpected member, if that is the problem.
	Member  string `json:"member,omitempty"`
	Message string `json:"message"`
	// SchemaLocation is the failing keyword's location, for schema problems.
	SchemaLocation string `json:"schemaLocation,omitempty"`
	// LoadTime is set for the harness's own load-time checks.
	LoadTime bool `json:"loadTime,omitempty"`
}

// checkReport is one document's outcome (one JSON object per document).
type checkReport struct {
	File     string    `json:"file"`
	Schema   string    `json:"schema,omitempty"`
	Valid    bool      `json:"valid"`
	Problems []problem `json:"problems"`
	// Error is an operational failure (the file could not be read).
	Error string `json:"error,omitempty"`
}

func runCheck(e *env, args []string) error {
	fs := newFlags(e, "check", "check [--schema NAME] [--format text|json] FILE...\n\n"+
		"Validates each document (- reads standard input) against its canonical schema,\n"+
		"detected from its shape or named by --schema: a root (registration,\n"+
		"intercept-request.schema.json, ...) or a $defs name (InjectEffect). A\n"+
		"registration also gets the harness's load-time checks (those of hooks.New, for a\n"+
		"host that supports every event). Problems print as FILE:POINTER: message.")
	schemaName := fs.String("schema", "", "validate against this schema `NAME` instead of detecting it")
	format := formatFlag(fs)
	files, _, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return usageError("check needs at least one FILE (or -)")
	}
	if n := countStdin(files); n > 1 {
		return usageError("standard input (-) can be read only once")
	}
	ref := ""
	if *schemaName != "" {
		if ref, err = resolveSchema(*schemaName); err != nil {
			return err
		}
	}
	failed := false
	enc := json.NewEncoder(e.stdout)
	for _, f := range files {
		r := checkFile(e, f, ref)
		if !r.Valid {
			failed = true
		}
		if *format == "json" {
			if err := enc.Encode(r); err != nil {
				return err
			}
			continue
		}
		printCheck(e.stdout, r)
	}
	if failed {
		return errFailed
	}
	return nil
}

func countStdin(files []string) int {
	n := 0
	for _, f := range files {
		if f == "-" {
			n++
		}
	}
	return n
}

func printCheck(w io.Writer, r checkReport) {
	name := displayName(r.File)
	switch {
	case r.Error != "":
		fmt.Fprintf(w, "%s: %s\n", name, r.Error)
	case r.Valid:
		fmt.Fprintf(w, "%s: valid %s\n", name, r.Schema)
	default:
		for _, p := range r.Problems {
			fmt.Fprintf(w, "%s:%s: %s\n", name, displayPointer(p.Pointer), p.Message)
		}
	}
}

func displayName(f string) string {
	if f == "-" {
		return "<stdin>"
	}
	return f
}

func displayPointer(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// readDocument reads a file, or standard input for "-", within the size
// bound.
func readDocument(e *env, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read: %w", unwrapPath(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", unwrapPath(err))
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxDocumentBytes)
	}
	return data, nil
}

// unwrapPath drops the path from an *os.PathError (the caller names the
// file already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func checkFile(e *env, name, ref string) checkReport {
	r := checkReport{File: name, Problems: []problem{}}
	data, err := readDocument(e, name)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if ref == "" {
		ref = detectSchema(data)
		if ref == "" {
			r.Problems = append(r.Problems, problem{Keyword: "shape", Message: "not a recognizable AHP document; name its schema with --schema"})
			return r
		}
	}
	r.Schema = ref
	r.Problems = validateProblems(ref, data)
	if len(r.Problems) == 0 && ref == registrationSchema {
		r.Problems = loadTimeProblems(data)
	}
	r.Valid = len(r.Problems) == 0
	return r
}

// loadTimeProblems runs hooks.New, the harness's own construction, on a
// schema-valid registration for a host that supports every event with its
// widest grant, and reports every problem it rejects the registration for.
func loadTimeProblems(data []byte) []problem {
	h, err := hooks.New(data, hooks.Config{Source: checkSource, Capabilities: fullGrants()})
	if err == nil {
		_ = h.Close() // New performs no I/O; nothing is running
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, single := err.(*hooks.ValidationError); !single {
			errs = j.Unwrap() // New joins one *ValidationError per problem
		}
	}
	var out []problem
	for _, err := range errs {
		var ve *hooks.ValidationError
		if !errors.As(err, &ve) {
			out = append(out, problem{Keyword: "load", Message: "rejected by the harness", LoadTime: true})
			continue
		}
		msg := fmt.Sprintf("load-time check %q failed", ve.Keyword)
		if ve.Detail != "" {
			msg = ve.Detail + " (load-time check " + strconv.Quote(ve.Keyword) + ")"
		}
		out = append(out, problem{Pointer: ve.Pointer, Keyword: ve.Keyword, Message: msg, LoadTime: true})
	}
	return out
}

// validateProblems validates data against ref and lists every cause.
func validateProblems(ref string, data []byte) []problem {
	err := validate.Default().Validate(ref, data)
	if err == nil {
		return nil
	}
	var ve *validate.Error
	if !errors.As(err, &ve) {
		return []problem{{Keyword: "schema", Message: "cannot be validated against " + ref}}
	}
	if ve.Keyword == validate.KeywordJSON && ve.SchemaLocation == "" {
		return []problem{{Keyword: validate.KeywordJSON, Message: fmt.Sprintf("malformed JSON at byte offset %d", ve.Offset)}}
	}
	causes := ve.Causes
	if len(causes) == 0 {
		causes = []validate.Cause{{Pointer: ve.Pointer, Keyword: ve.Keyword, SchemaLocation: ve.SchemaLocation,
			Missing: ve.Missing, Unexpected: ve.Unexpected, Allowed: ve.Allowed}}
	}
	var doc any
	var out []problem
	for _, c := range causes {
		switch c.Keyword {
		case "required", "dependentRequired":
			for _, m := range c.Missing {
				out = append(out, problem{Pointer: c.Pointer, Keyword: c.Keyword, Member: m, SchemaLocation: c.SchemaLocation,
					Message: fmt.Sprintf("missing required member %q", m)})
			}
			if len(c.Missing) > 0 {
				continue
			}
		case "additionalProperties", "unevaluatedProperties":
			names := c.Unexpected
			if len(names) == 0 {
				if doc == nil {
					doc = decodeLoose(data)
				}
				names = unexpectedMembers(doc, c.Pointer, c.SchemaLocation)
			}
			for _, m := range names {
				out = append(out, problem{Pointer: c.Pointer + "/" + escapeToken(m), Keyword: c.Keyword, Member: m, SchemaLocation: c.SchemaLocation,
					Message: fmt.Sprintf("unexpected member %q", m)})
			}
			if len(names) > 0 {
				continue
			}
		}
		out = append(out, problem{Pointer: c.Pointer, Keyword: c.Keyword, SchemaLocation: c.SchemaLocation, Message: keywordMessage(c)})
	}
	return out
}

// keywordMessage describes a failed keyword without the instance value.
func keywordMessage(c validate.Cause) string {
	what := map[string]string{
		"type":      "has the wrong type",
		"const":     "is not the required value",
		"enum":      "is not one of the allowed values",
		"pattern":   "does not match the required pattern",
		"format":    "is not in the required format",
		"minLength": "is too short", "maxLength": "is too long",
		"minItems": "has too few items", "maxItems": "has too many items",
		"minimum": "is too small", "exclusiveMinimum": "is too small",
		"maximum": "is too large", "exclusiveMaximum": "is too large",
		"minProperties": "has too few members", "maxProperties": "has too many members",
		"uniqueItems":          "has duplicate items",
		"oneOf":                "matches none (or more than one) of the allowed shapes",
		"anyOf":                "matches none of the allowed shapes",
		"not":                  "has a shape that is not allowed",
		"contains":             "has no required item",
		"false":                "is not allowed here",
		"additionalProperties": "has an unexpected member", "unevaluatedProperties": "has an unexpected member",
		"additionalItems": "has unexpected items", "unevaluatedItems": "has unexpected items",
	}[c.Keyword]
	if what == "" {
		what = "fails the schema"
	}
	if len(c.Allowed) > 0 {
		// The allowed values, from the schema (never the instance's).
		allowed := strings.TrimPrefix(c.Detail(), "allowed ")
		if c.Keyword == "const" {
			what = "must be " + allowed
		} else {
			what = "must be one of " + allowed
		}
	}
	s := fmt.Sprintf("%s (keyword %q", what, c.Keyword)
	if c.SchemaLocation != "" {
		s += " at " + c.SchemaLocation
	}
	return s + ")"
}

// decodeLoose decodes a document for member lookups; nil when malformed.
func decodeLoose(data []byte) any {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// unexpectedMembers lists, in name order, the members of the object at
// pointer that the schema object owning the failed keyword at loc does not
// declare (properties or patternProperties, through allOf and $ref).
func unexpectedMembers(doc any, pointer, loc string) []string {
	obj, ok := lookup(doc, pointer).(map[string]any)
	if !ok {
		return nil
	}
	file, frag, _ := strings.Cut(loc, "#")
	i := strings.LastIndex(frag, "/")
	if i < 0 {
		return nil
	}
	owner := schemaNode(file, frag[:i])
	if owner == nil {
		return nil
	}
	names, patterns := map[string]bool{}, []*regexp.Regexp(nil)
	declared(file, owner, names, &patterns, 0)
	var out []string
	for m := range obj {
		if names[m] || slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(m) }) {
			continue
		}
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func declared(file string, node map[string]any, names map[string]bool, patterns *[]*regexp.Regexp, depth int) {
	if depth > 16 {
		return
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for k := range props {
			names[k] = true
		}
	}
	if pp, ok := node["patternProperties"].(map[string]any); ok {
		for k := range pp {
			if re, err := regexp.Compile(k); err == nil {
				*patterns = append(*patterns, re)
			}
		}
	}
	if ref, ok := node["$ref"].(string); ok {
		f, frag, _ := strings.Cut(ref, "#")
		if f == "" {
			f = file
		}
		if n := schemaNode(f, frag); n != nil {
			declared(f, n, names, patterns, depth+1)
		}
	}
	if all, ok := node["allOf"].([]any); ok {
		for _, s := range all {
			if n, ok := s.(map[string]any); ok {
				declared(file, n, names, patterns, depth+1)
			}
		}
	}
}

// lookup resolves an RFC 6901 pointer in a decoded document.
func lookup(doc any, pointer string) any {
	if pointer == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := cur.(type) {
		case map[string]any:
			cur = v[tok]
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(v) {
				return nil
			}
			cur = v[n]
		default:
			return nil
		}
	}
	return cur
}

func escapeToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// schemaDocs holds the embedded schema documents, decoded once.
var schemaDocs = sync.OnceValue(func() map[string]any {
	out := map[string]any{}
	for _, name := range schemas.Documents() {
		data, err := fsReadFile(name)
		if err != nil {
			continue
		}
		out[name] = decodeLoose(data)
	}
	return out
})

func fsReadFile(name string) ([]byte, error) {
	f, err := schemas.FS().Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// schemaNode returns the schema object at fragment pointer frag of file.
func schemaNode(file, frag string) map[string]any {
	doc, ok := schemaDocs()[file]
	if !ok {
		return nil
	}
	n, _ := lookup(doc, frag).(map[string]any)
	return n
}

// resolveSchema turns a --schema NAME into a validation reference: a root
// document (with or without .schema.json), a $defs name unique across the
// documents, or an explicit reference such as effect.schema.json#/$defs/X.
func resolveSchema(name string) (string, error) {
	docs := schemaDocs()
	if file, frag, ok := strings.Cut(name, "#"); ok {
		if _, known := docs[file]; !known || schemaNode(file, frag) == nil {
			return "", usageError("--schema %q: no such schema location", name)
		}
		return name, nil
	}
	for _, cand := range []string{name, name + ".schema.json"} {
		if _, ok := docs[cand]; ok {
			return cand, nil
		}
	}
	var found []string
	for file, doc := range docs {
		defs, _ := lookup(doc, "/$defs").(map[string]any)
		if _, ok := defs[name]; ok {
			found = append(found, file+"#/$defs/"+escapeToken(name))
		}
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", usageError("--schema %q: not a schema document or $defs name (roots: %s)", name, strings.Join(schemas.Documents(), ", "))
	case 1:
		return found[0], nil
	default:
		return "", usageError("--schema %q is defined in several documents; name one of: %s", name, strings.Join(found, ", "))
	}
}

// detectSchema picks the root schema from a document's shape, or "".
func detectSchema(data []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		// Malformed or not an object: let the most likely root report it.
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
			return "json-rpc-message.schema.json"
		}
		return ""
	}
	has := func(k string) bool { _, ok := top[k]; return ok }
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(top[k], &s)
		return s
	}
	switch {
	case has("hooks"):
		return registrationSchema
	case has("jsonrpc"):
		switch str("method") {
		case "hooks/intercept":
			return "intercept-request.schema.json"
		case "hooks/observe":
			return "observe-notification.schema.json"
		case "hooks/capabilities":
			return "capabilities-request.schema.json"
		}
		if has("result") {
			var res map[string]json.RawMessage
			_ = json.Unmarshal(top["result"], &res)
			if _, ok := res["manifest"]; ok {
				return "capabilities-response.schema.json"
			}
			return "intercept-response.schema.json"
		}
		return "json-rpc-message.schema.json"
	case has("specversion") || (has("type") && has("source") && has("id")):
		return "event.schema.json"
	case has("type") && (has("reason") || has("target") || has("value") || has("deliverAt")):
		return "effect.schema.json"
	}
	return ""
}
