package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

const hooksPackage = "github.com/agenthooks/agenthooks-go/hooks"

// hooksWrappers are the protocol-owned wrapper members whose fields an
// <Event>Input flattens, with the Go prefix of the flattened fields: the
// tool-call identity objects. Everything else, and in particular the
// application's own arguments (tool.input), keeps its shape.
var hooksWrappers = map[string]string{"tool": "", "call": "Call"}

// hooksOwned are members the SDK fills and a caller can never set.
var hooksOwned = map[string]bool{"type": true, "source": true, "manifest": true}

// renderHooksEvents renders hooks/events_gen.go: for every event of the
// catalogue an <Event>Input type, its conversion to the canonical wire event,
// and the Hooks method delivering it; plus the per-arm helpers the
// dispatcher needs (tool facts for filters, native stripping).
func renderHooksEvents(m *model) ([]byte, error) {
	f := jen.NewFilePathName(hooksPackage, "hooks")
	f.HeaderComment(genHeader)
	f.HeaderComment("Source: the event catalogue (gen.Events) and the event payload schemas.")
	f.ImportName(genPackage, "gen")

	var facts, natives []jen.Code
	nw := &contentWalk{m: m, native: true, contains: map[*goType]bool{}, emitted: map[*goType]bool{}}
	for _, ev := range m.events {
		pt := resolved(m.typeAt(ev.PayloadSchema))
		if pt.Kind != kindObject {
			return nil, fmt.Errorf("event %s: payload %s is not an object", ev.Name, ev.PayloadSchema)
		}
		if err := renderHooksEvent(f, ev, pt); err != nil {
			return nil, fmt.Errorf("event %s: %w", ev.Name, err)
		}
		arm := jen.Id("e").Dot(ev.GoName)
		var kind, path jen.Code = jen.Nil(), jen.Nil()
		hasFacts := false
		for _, fl := range pt.Fields {
			switch {
			case fl.JSON == "tool" && resolved(fl.Type).Kind == kindObject:
				for _, sub := range resolved(fl.Type).Fields {
					if sub.JSON == "kind" && resolved(sub.Type).Kind == kindString && !sub.Required {
						kind, hasFacts = arm.Clone().Dot(fl.Go).Dot(sub.Go), true
					}
				}
			case fl.JSON == "path" && resolved(fl.Type).Kind == kindString:
				if fl.Required {
					path = jen.Op("&").Add(arm.Clone()).Dot(fl.Go)
				} else {
					path = arm.Clone().Dot(fl.Go)
				}
				hasFacts = true
			}
		}
		if nw.has(pt) {
			nw.need(pt)
			natives = append(natives, jen.Case(arm.Clone().Op("!=").Nil()).Block(
				jen.If(jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id(nw.walkerName(pt)).Call(arm.Clone()), jen.Id("ok")).Block(
					jen.Return(jen.Op("&").Qual(genPackage, "Event").Values(jen.Id(ev.GoName).Op(":").Id("x"))),
				),
				jen.Return(jen.Id("e")),
			))
		}
		if hasFacts {
			facts = append(facts, jen.Case(arm.Clone().Op("!=").Nil()).Block(jen.Return(kind, path)))
		}
	}

	f.Comment("eventFacts returns the tool kind and tool path an event states, for subscription filters; nil when the event has none.")
	f.Func().Id("eventFacts").Params(jen.Id("e").Op("*").Qual(genPackage, "Event")).Params(jen.Op("*").String(), jen.Op("*").String()).Block(
		jen.Switch().Block(facts...),
		jen.Return(jen.Nil(), jen.Nil()),
	)
	f.Comment(`withoutNative returns e without the native members its payload schema
defines at any depth (the event's own and nested ones, such as error.native),
copying what it changes and sharing the rest, or e itself when it has none.`)
	f.Func().Id("withoutNative").Params(jen.Id("e").Op("*").Qual(genPackage, "Event")).Op("*").Qual(genPackage, "Event").Block(
		jen.Switch().Block(natives...),
		jen.Return(jen.Id("e")),
	)
	for i := 0; i < len(nw.order); i++ { // walker bodies may discover more types
		nw.walker(f, nw.order[i])
	}
	if nw.err != nil {
		return nil, nw.err
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hooksExpr is goExpr with names qualified by package gen.
func hooksExpr(t *goType) *jen.Statement {
	switch t.Kind {
	case kindRaw:
		return jen.Qual("encoding/json", "RawMessage")
	case kindString:
		if t.Name != "" {
			return jen.Qual(genPackage, t.Name)
		}
		return jen.String()
	case kindNumber:
		return jen.Qual("encoding/json", "Number")
	case kindBool:
		return jen.Bool()
	case kindArray:
		if t.Name != "" {
			return jen.Qual(genPackage, t.Name)
		}
		return jen.Index().Add(hooksExpr(t.Elem))
	case kindMap:
		return jen.Qual(genPackage, "OrderedMap").Types(hooksExpr(t.Elem))
	case kindNullable:
		return jen.Qual(genPackage, "Nullable").Types(hooksExpr(t.Elem))
	}
	return jen.Qual(genPackage, t.Name)
}

func hooksFieldType(fl *field) *jen.Statement {
	t := hooksExpr(fl.Type)
	if !fl.Required && !optionalByNil(fl.Type) {
		return jen.Op("*").Add(t)
	}
	return t
}

func hooksFieldDoc(goName, jsonPath string, fl *field) string {
	doc := fmt.Sprintf("%s is the %q member", goName, jsonPath)
	if fl.Required {
		doc += " (required)"
	} else {
		doc += " (optional; nil when absent)"
	}
	if d := strings.TrimSpace(strings.ReplaceAll(fl.Doc, "\n", " ")); d != "" {
		doc += ". " + d
	} else {
		doc += "."
	}
	return doc
}

// member is one member of a built payload: its Go field name and value.
type member struct {
	name  string
	value jen.Code
}

func renderHooksEvent(f *jen.File, ev eventInfo, pt *goType) error {
	input := ev.GoName + "Input"
	used := map[string]string{}
	claim := func(goName, path string) error {
		if prev, ok := used[goName]; ok {
			return fmt.Errorf("input field %s for %q collides with %q", goName, path, prev)
		}
		used[goName] = path
		return nil
	}
	var fields []jen.Code
	var assign []member // members of the payload
	var pre []jen.Code  // statements before the literal
	timed := false      // the SDK may format the time (into the event's allocation, newBuilt)
	for _, fl := range pt.Fields {
		switch {
		case hooksOwned[fl.JSON]:
			switch fl.JSON {
			case "type":
				name := ev.Name
				if fl.Const != nil {
					name = *fl.Const
				}
				assign = append(assign, member{fl.Go, jen.Lit(name)})
			case "source":
				assign = append(assign, member{fl.Go, jen.Id("f").Dot("source")})
			case "manifest":
				assign = append(assign, member{fl.Go, jen.Id("f").Dot("sessionManifest").Call()})
			}
		case fl.JSON == "id" && resolved(fl.Type).Kind == kindString && fl.Required:
			if err := claim("ID", "id"); err != nil {
				return err
			}
			fields = append(fields, jen.Comment("ID is the event id; empty means the SDK generates one. WithEventID takes precedence. Reuse the id when retrying the same occurrence."), jen.Id("ID").String())
			assign = append(assign, member{fl.Go, jen.Id("f").Dot("eventID").Call(jen.Id("in").Dot("ID"))})
		case fl.JSON == "time" && resolved(fl.Type).Kind == kindString && fl.Required:
			if err := claim("Time", "time"); err != nil {
				return err
			}
			fields = append(fields, jen.Comment("Time is when the harness created the event; zero means now."), jen.Id("Time").Qual("time", "Time"))
			assign = append(assign, member{fl.Go, jen.Id("f").Dot("eventTimeIn").Call(jen.Id("tb"), jen.Id("in").Dot("Time"))})
			timed = true
		case isWrapper(fl):
			wt := resolved(fl.Type)
			prefix := hooksWrappers[fl.JSON]
			var inner []jen.Code
			for _, sub := range wt.Fields {
				name := prefix + sub.Go
				path := fl.JSON + "." + sub.JSON
				if err := claim(name, path); err != nil {
					return err
				}
				if sub.JSON == "input" && resolved(sub.Type).Kind == kindRaw {
					// The application's arguments: any JSON-marshalable
					// value, never flattened or typed by the SDK.
					fields = append(fields, jen.Comment(name+" is the application-owned \""+path+"\" member: a json.RawMessage or any JSON-marshalable value, passed through unchanged."), jen.Id(name).Any())
					v := lowerFirst(fl.Go) + "Input"
					pre = append(pre,
						jen.List(jen.Id(v), jen.Err()).Op(":=").Id("f").Dot("appJSON").Call(jen.Id("in").Dot(name), jen.Lit("/"+fl.JSON+"/"+sub.JSON)),
						jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
					)
					inner = append(inner, jen.Id(sub.Go).Op(":").Id(v))
					continue
				}
				fields = append(fields, jen.Comment(hooksFieldDoc(name, path, sub)), jen.Id(name).Add(hooksFieldType(sub)))
				inner = append(inner, jen.Id(sub.Go).Op(":").Id("in").Dot(name))
			}
			assign = append(assign, member{fl.Go, jen.Qual(genPackage, fl.Type.Name).Custom(multiline, inner...)})
			continue
		default:
			goto plain
		}
		continue
	plain:
		if err := claim(fl.Go, fl.JSON); err != nil {
			return err
		}
		fields = append(fields, jen.Comment(hooksFieldDoc(fl.Go, fl.JSON, fl)), jen.Id(fl.Go).Add(hooksFieldType(fl)))
		assign = append(assign, member{fl.Go, jen.Id("in").Dot(fl.Go)})
	}

	mode := "interceptable"
	if !ev.Intercept {
		mode = "observe-only"
	}
	f.Comment(fmt.Sprintf(`%s describes one %s occurrence (%s) for Hooks.%s. It holds
only occurrence facts: the SDK supplies the event type, source%s, and the
id and time when they are empty. Protocol-owned wrappers are flattened;
application-owned JSON is passed through unchanged.`, input, ev.Name, mode, ev.GoName, manifestNote(pt)))
	f.Type().Id(input).Struct(fields...)

	// The event and its payload in one allocation (built), with its time
	// when that costs nothing (newBuilt).
	body := append([]jen.Code{}, pre...)
	if timed {
		// The members are set one by one: a literal assigned to the
		// allocated payload would be built aside and copied.
		body = append(body,
			jen.List(jen.Id("b"), jen.Id("tb")).Op(":=").Id("newBuilt").Types(jen.Qual(genPackage, ev.PayloadType)).Call(),
			jen.Id("p").Op(":=").Op("&").Id("b").Dot("payload"),
		)
		for _, m := range assign {
			body = append(body, jen.Id("p").Dot(m.name).Op("=").Add(m.value))
		}
	} else {
		var lit []jen.Code
		for _, m := range assign {
			lit = append(lit, jen.Id(m.name).Op(":").Add(m.value))
		}
		body = append(body,
			jen.Id("b").Op(":=").Op("&").Id("built").Types(jen.Qual(genPackage, ev.PayloadType)).Values(jen.Id("payload").Op(":").Qual(genPackage, ev.PayloadType).Custom(multiline, lit...)),
		)
	}
	body = append(body,
		jen.Id("b").Dot("ev").Dot(ev.GoName).Op("=").Op("&").Id("b").Dot("payload"),
		jen.Return(jen.Op("&").Id("b").Dot("ev"), jen.Nil()),
	)
	f.Comment("wire converts the input into the canonical " + ev.Name + " event.")
	f.Func().Params(jen.Id("in").Op("*").Id(input)).Id("wire").Params(jen.Id("f").Op("*").Id("fill")).Params(jen.Op("*").Qual(genPackage, "Event"), jen.Error()).Block(body...)

	var doc string
	if ev.Intercept {
		doc = fmt.Sprintf(`%s delivers a %s occurrence: matching intercept subscriptions
are called serially in registration order and their responses settled, then
observers are notified with the settled event (and owed observations are
sent after a short-circuit). The Result is the host's decision input; a
denial is a Result, not an error. The error is non-nil only for a closed
Hooks (ErrClosed), the caller's cancellation, the caller's deadline before
the decision is settled (both wrapping ctx.Err()), or invalid host input
(ErrInvalidInput). A Result returned with ErrClosed or ctx's end (nil
when the call was refused at entry) is interrupted and never authorizes
execution.

Observations cannot change a settled decision, and interruption overrides
it. When ctx's deadline passes during the observations, they are cut short,
each recorded as an observe Diagnostic, and the settled Result is returned
without error. A cancellation of ctx or Close during the observations cuts
them short too, but returns the error with an interrupted Result. The
observations run concurrently and the call waits for them, so after
settlement it takes at most the least of the remaining ctx budget and
Config.ObserveTimeout (an owed observation's timeoutMs only shortens its
own delivery), plus the time the transports, in-process handlers and the
Preparer take to give up what was cut short: they must honour their
context. Nothing the call started runs after it returns.

The call takes over the attachments given with WithAttachment: a Result
returned without error owns them (Result.Attachments; the caller releases
them with Result.Close), and a call that returns an error has closed them.`, ev.GoName, ev.Name)
	} else {
		doc = fmt.Sprintf(`%s delivers a %s occurrence to matching observe subscriptions
(the event is observe-only: nothing is intercepted and the Result carries
only diagnostics). The error is non-nil only for a closed Hooks (ErrClosed),
the caller's cancellation, a ctx deadline that passed before delivery began,
or invalid host input. A deadline passing during delivery cuts the
observations short, each recorded as a Diagnostic, and the call returns
without error; a cancellation of ctx or Close during delivery cuts them
short and returns the error with an interrupted Result. The observations run
concurrently and the call waits for them: it takes at most the least of the
remaining ctx budget and Config.ObserveTimeout, plus the time the
transports, in-process handlers and the Preparer take to give up what was
cut short (they must honour their context).

The call takes over the attachments given with WithAttachment: a Result
returned without error owns them (Result.Attachments; the caller releases
them with Result.Close), and a call that returns an error has closed them.`, ev.GoName, ev.Name)
	}
	f.Comment(doc)
	f.Func().Params(jen.Id("h").Op("*").Id("Hooks")).Id(ev.GoName).Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("in").Id(input), jen.Id("opts").Op("...").Id("CallOption"),
	).Params(jen.Op("*").Id("Result"), jen.Error()).Block(
		jen.Return(jen.Id("h").Dot("dispatch").Call(jen.Id("ctx"), jen.Qual(genPackage, "Event"+ev.GoName), jen.Id("opts"), jen.Id("in").Dot("wire"))),
	)
	return nil
}

// multiline renders a composite literal with one element per line.
var multiline = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// isWrapper reports whether fl is a required protocol-owned wrapper object
// whose members an input flattens.
func isWrapper(fl *field) bool {
	_, ok := hooksWrappers[fl.JSON]
	return ok && fl.Required && resolved(fl.Type).Kind == kindObject
}

func manifestNote(pt *goType) string {
	for _, fl := range pt.Fields {
		if fl.JSON == "manifest" {
			return ", the session manifest"
		}
	}
	return ""
}
