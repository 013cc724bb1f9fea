package main

import (
	"slices"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/hooks"
)

// checkSource is the harness source of the Hooks that ahp builds; it never
// leaves this process except as the source of events ahp builds itself.
const checkSource = "urn:agenthooks:ahp"

// fullGrant is the widest grant the boundary of info allows: every effect
// family, modification target (replace and merge where the boundary allows
// merge), flow operation and delivery point of its capability definition.
// Events without interception get an observation grant.
func fullGrant(info gen.EventInfo) hooks.Grant {
	if !info.Interceptable() {
		return hooks.Observe()
	}
	g := hooks.Intercept()
	for _, f := range info.EffectFamilies {
		switch f {
		case gen.EffectFamilyAllow:
			g = g.Allow()
		case gen.EffectFamilyDeny:
			g = g.Deny()
		case gen.EffectFamilyAsk:
			g = g.Ask()
		case gen.EffectFamilyMessage:
			g = g.Message()
		case gen.EffectFamilyReturn:
			g = g.Return()
		case gen.EffectFamilyInject:
			g = g.Inject(gen.DeliverAtNow, gen.DeliverAtNextTurn)
		case gen.EffectFamilyFlow:
			if slices.Contains(info.FlowOperations, "stop") {
				g = g.Stop()
			}
			if slices.Contains(info.FlowOperations, "continue") {
				g = g.Continue(3)
			}
		case gen.EffectFamilyModify:
			for _, t := range info.ModifyTargets {
				g = g.Modify(t, hooks.Replace, hooks.Merge)
			}
		}
	}
	return g
}

// fullGrants is fullGrant for every event of the catalogue.
func fullGrants() map[gen.EventName]hooks.Grant {
	m := map[gen.EventName]hooks.Grant{}
	for _, info := range gen.Events() {
		m[info.Name] = fullGrant(info)
	}
	return m
}
