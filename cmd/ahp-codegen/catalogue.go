package main

import (
	"bytes"
	"fmt"

	"github.com/dave/jennifer/jen"
)

// eventInfo is one row of the event catalogue, derived from schema metadata.
type eventInfo struct {
	Name             string
	GoName           string
	PayloadSchema    string
	PayloadType      string
	Intercept        bool
	Observe          bool
	CapabilitySchema string
	CapabilityType   string
	EffectFamilies   []string
	ModifyTargets    []string
	FlowOperations   []string
	ResponseSchema   string
}

func enumStrings(n *rawNode) []string {
	var out []string
	for _, v := range n.arrOrNil() {
		if v.kind == 's' {
			out = append(out, v.str)
		}
	}
	return out
}

// subscriptionEvents reads the closed event enumeration of a registration
// subscription definition.
func subscriptionEvents(set *schemaSet, def string) ([]string, error) {
	n, err := set.resolvePointer(loc{File: "registration.schema.json", Pointer: "/$defs/" + def + "/properties/events/items"})
	if err != nil {
		return nil, err
	}
	for _, a := range n.Raw.get("anyOf").arrOrNil() {
		if e := a.get("enum"); e != nil {
			return enumStrings(e), nil
		}
	}
	return nil, fmt.Errorf("registration.schema.json: %s events enumeration not found", def)
}

func buildCatalogue(set *schemaSet, b *builder) ([]byte, []eventInfo, error) {
	observe, err := subscriptionEvents(set, "observeSubscription")
	if err != nil {
		return nil, nil, err
	}
	intercept, err := subscriptionEvents(set, "interceptSubscription")
	if err != nil {
		return nil, nil, err
	}
	isIntercept := map[string]bool{}
	for _, e := range intercept {
		isIntercept[e] = true
	}
	// Payload schemas: the arms of the event union, keyed by their type const.
	eventDoc := set.Docs["event.schema.json"]
	payload := map[string]loc{}
	for i, arm := range eventDoc.Raw.get("oneOf").arrOrNil() {
		target, err := set.resolveRef(loc{File: "event.schema.json", Pointer: fmt.Sprintf("/oneOf/%d", i)}, arm.get("$ref").str)
		if err != nil {
			return nil, nil, err
		}
		n, err := set.resolvePointer(target)
		if err != nil {
			return nil, nil, err
		}
		name := eventTypeConst(set, n)
		if name == "" {
			return nil, nil, fmt.Errorf("%s: no type const", target)
		}
		payload[name] = target
	}
	caps := set.Docs["capabilities.schema.json"].Raw.get("$defs")
	respDefs := set.Docs["intercept-response.schema.json"].Raw.get("$defs")
	var rows []eventInfo
	for _, name := range observe {
		pl, ok := payload[name]
		if !ok {
			return nil, nil, fmt.Errorf("event %s has no payload schema in event.schema.json", name)
		}
		row := eventInfo{Name: name, GoName: goCase(name), Observe: true, Intercept: isIntercept[name]}
		row.PayloadSchema = schemaRefString(pl)
		row.PayloadType = b.typeAt(pl, "").Name
		if c := caps.get(name); c != nil {
			cl := loc{File: "capabilities.schema.json", Pointer: "/$defs/" + name}
			row.CapabilitySchema = schemaRefString(cl)
			row.CapabilityType = b.typeAt(cl, "").Name
			for _, m := range c.get("allOf").arrOrNil() {
				props := m.get("properties")
				if props == nil {
					continue
				}
				row.EffectFamilies = enumStrings(props.get("effects").get("items").get("enum"))
				row.ModifyTargets = enumStrings(props.get("modify").get("propertyNames").get("enum"))
				row.FlowOperations = enumStrings(props.get("flow").get("properties").get("operations").get("items").get("enum"))
			}
		}
		if respDefs.get(row.GoName+"InterceptResponse") != nil {
			row.ResponseSchema = "intercept-response.schema.json#/$defs/" + row.GoName + "InterceptResponse"
		}
		if row.Intercept && row.CapabilitySchema == "" {
			return nil, nil, fmt.Errorf("interceptable event %s has no capabilities definition", name)
		}
		rows = append(rows, row)
	}

	f := jen.NewFilePathName(genPackage, "gen")
	f.HeaderComment(genHeader)
	f.HeaderComment("Source: schemas/registration.schema.json, event.schema.json, capabilities.schema.json, intercept-response.schema.json")

	f.Comment("EventName is the wire name of an AHP event type.")
	f.Type().Id("EventName").String()
	var consts []jen.Code
	for _, r := range rows {
		consts = append(consts, jen.Comment(fmt.Sprintf("Event%s is %q.", r.GoName, r.Name)), jen.Id("Event"+r.GoName).Id("EventName").Op("=").Lit(r.Name))
	}
	f.Const().Defs(consts...)

	f.Comment("Mode is a delivery mode of a subscription.")
	f.Type().Id("Mode").String()
	f.Const().Defs(
		jen.Comment("ModeIntercept delivers a hooks/intercept request and waits for effects."),
		jen.Id("ModeIntercept").Id("Mode").Op("=").Lit("intercept"),
		jen.Comment("ModeObserve delivers a hooks/observe notification."),
		jen.Id("ModeObserve").Id("Mode").Op("=").Lit("observe"),
	)

	f.Comment("ModifyTarget names what a modify effect edits.")
	f.Type().Id("ModifyTarget").String()
	targets := modifyTargets(set)
	var tconsts []jen.Code
	for _, t := range targets {
		tconsts = append(tconsts, jen.Comment(fmt.Sprintf("ModifyTarget%s is %q.", goCase(t), t)), jen.Id("ModifyTarget"+goCase(t)).Id("ModifyTarget").Op("=").Lit(t))
	}
	f.Const().Defs(tconsts...)

	f.Comment(`EventInfo describes one event: its payload, the modes it may be delivered
in, and, for interceptable events, the capability definition with the effect
families, modification targets and flow operations the boundary can grant.`)
	f.Type().Id("EventInfo").Struct(
		jen.Comment("Name is the wire name."), jen.Id("Name").Id("EventName"),
		jen.Comment("GoName is the Go method name used for the event (ToolBefore for tool.before)."), jen.Id("GoName").String(),
		jen.Comment("PayloadSchema is the schema reference of the event payload."), jen.Id("PayloadSchema").String(),
		jen.Comment("PayloadType is the Go type name of the payload in this package."), jen.Id("PayloadType").String(),
		jen.Comment("Modes lists the delivery modes the registration schema allows."), jen.Id("Modes").Index().Id("Mode"),
		jen.Comment("CapabilitySchema is the capabilities definition for intercept, empty for observe-only events."), jen.Id("CapabilitySchema").String(),
		jen.Comment("CapabilityType is the Go type name of the capabilities definition."), jen.Id("CapabilityType").String(),
		jen.Comment("EffectFamilies lists the effect families the boundary can grant."), jen.Id("EffectFamilies").Index().Id("EffectFamily"),
		jen.Comment("ModifyTargets lists the modification targets the boundary can grant."), jen.Id("ModifyTargets").Index().Id("ModifyTarget"),
		jen.Comment("FlowOperations lists the flow operations the boundary can grant."), jen.Id("FlowOperations").Index().String(),
		jen.Comment("ResponseSchema is the per-event intercept response definition, if any."), jen.Id("ResponseSchema").String(),
	)
	f.Comment("Interceptable reports whether the event can be delivered in intercept mode.")
	f.Func().Params(jen.Id("i").Id("EventInfo")).Id("Interceptable").Params().Bool().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("m")).Op(":=").Range().Id("i").Dot("Modes")).Block(
			jen.If(jen.Id("m").Op("==").Id("ModeIntercept")).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.False()),
	)

	var table []jen.Code
	for _, r := range rows {
		modes := []jen.Code{}
		if r.Intercept {
			modes = append(modes, jen.Id("ModeIntercept"))
		}
		modes = append(modes, jen.Id("ModeObserve"))
		var fams, tgts, flows []jen.Code
		for _, x := range r.EffectFamilies {
			fams = append(fams, jen.Id("EffectFamily").Call(jen.Lit(x)))
		}
		for _, x := range r.ModifyTargets {
			tgts = append(tgts, jen.Id("ModifyTarget"+goCase(x)))
		}
		for _, x := range r.FlowOperations {
			flows = append(flows, jen.Lit(x))
		}
		vals := []jen.Code{
			jen.Id("Name").Op(":").Id("Event" + r.GoName),
			jen.Id("GoName").Op(":").Lit(r.GoName),
			jen.Id("PayloadSchema").Op(":").Lit(r.PayloadSchema),
			jen.Id("PayloadType").Op(":").Lit(r.PayloadType),
			jen.Id("Modes").Op(":").Index().Id("Mode").Values(modes...),
		}
		if r.CapabilitySchema != "" {
			vals = append(vals,
				jen.Id("CapabilitySchema").Op(":").Lit(r.CapabilitySchema),
				jen.Id("CapabilityType").Op(":").Lit(r.CapabilityType))
		}
		if len(fams) > 0 {
			vals = append(vals, jen.Id("EffectFamilies").Op(":").Index().Id("EffectFamily").Values(fams...))
		}
		if len(tgts) > 0 {
			vals = append(vals, jen.Id("ModifyTargets").Op(":").Index().Id("ModifyTarget").Values(tgts...))
		}
		if len(flows) > 0 {
			vals = append(vals, jen.Id("FlowOperations").Op(":").Index().String().Values(flows...))
		}
		if r.ResponseSchema != "" {
			vals = append(vals, jen.Id("ResponseSchema").Op(":").Lit(r.ResponseSchema))
		}
		table = append(table, jen.Values(vals...))
	}
	f.Comment("eventCatalogue is never modified; accessors return copies.")
	f.Var().Id("eventCatalogue").Op("=").Index(jen.Op("...")).Id("EventInfo").Values(table...)

	f.Comment(fmt.Sprintf("Events returns the catalogue of all %d events in registration-schema order. The result is a fresh copy.", len(rows)))
	f.Func().Id("Events").Params().Index().Id("EventInfo").Block(
		jen.Id("out").Op(":=").Make(jen.Index().Id("EventInfo"), jen.Len(jen.Id("eventCatalogue"))),
		jen.For(jen.List(jen.Id("i"), jen.Id("e")).Op(":=").Range().Id("eventCatalogue")).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Id("e").Dot("clone").Call(),
		),
		jen.Return(jen.Id("out")),
	)
	f.Comment("LookupEvent returns the catalogue entry of the named event.")
	f.Func().Id("LookupEvent").Params(jen.Id("name").Id("EventName")).Params(jen.Id("EventInfo"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("eventCatalogue")).Block(
			jen.If(jen.Id("e").Dot("Name").Op("==").Id("name")).Block(jen.Return(jen.Id("e").Dot("clone").Call(), jen.True())),
		),
		jen.Return(jen.Id("EventInfo").Values(), jen.False()),
	)
	f.Func().Params(jen.Id("e").Id("EventInfo")).Id("clone").Params().Id("EventInfo").Block(
		jen.Id("e").Dot("Modes").Op("=").Append(jen.Index().Id("Mode").Call(jen.Nil()), jen.Id("e").Dot("Modes").Op("...")),
		jen.Id("e").Dot("EffectFamilies").Op("=").Append(jen.Index().Id("EffectFamily").Call(jen.Nil()), jen.Id("e").Dot("EffectFamilies").Op("...")),
		jen.Id("e").Dot("ModifyTargets").Op("=").Append(jen.Index().Id("ModifyTarget").Call(jen.Nil()), jen.Id("e").Dot("ModifyTargets").Op("...")),
		jen.Id("e").Dot("FlowOperations").Op("=").Append(jen.Index().String().Call(jen.Nil()), jen.Id("e").Dot("FlowOperations").Op("...")),
		jen.Return(jen.Id("e")),
	)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), rows, nil
}

func schemaRefString(l loc) string {
	if l.Pointer == "" {
		return l.File
	}
	return l.File + "#" + l.Pointer
}

// eventTypeConst returns the const of the "type" member of an event schema,
// following allOf members.
func eventTypeConst(set *schemaSet, n *node) string {
	if c := n.Raw.get("properties").get("type").get("const"); c != nil {
		return c.str
	}
	for i := range n.Raw.get("allOf").arrOrNil() {
		m, err := set.resolvePointer(n.Loc.child("allOf", fmt.Sprint(i)))
		if err != nil {
			continue
		}
		if ref := m.Raw.get("$ref"); ref != nil {
			if t, err := set.resolveRef(m.Loc, ref.str); err == nil {
				if tn, err := set.resolvePointer(t); err == nil {
					if s := eventTypeConst(set, tn); s != "" {
						return s
					}
				}
			}
		}
		if s := eventTypeConst(set, m); s != "" {
			return s
		}
	}
	if ref := n.Raw.get("$ref"); ref != nil {
		if t, err := set.resolveRef(n.Loc, ref.str); err == nil {
			if tn, err := set.resolvePointer(t); err == nil {
				return eventTypeConst(set, tn)
			}
		}
	}
	return ""
}

// modifyTargets lists the members of the capabilities modify object in order.
func modifyTargets(set *schemaSet) []string {
	props := set.Docs["capabilities.schema.json"].Raw.get("properties").get("modify").get("properties")
	if props == nil {
		return nil
	}
	return append([]string(nil), props.keys...)
}
