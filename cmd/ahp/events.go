package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agenthooks/agenthooks-go/gen"
)

// eventLine is one catalogue entry as printed with --format json.
type eventLine struct {
	Name           string   `json:"name"`
	Modes          []string `json:"modes"`
	EffectFamilies []string `json:"effectFamilies"`
	ModifyTargets  []string `json:"modifyTargets"`
	FlowOperations []string `json:"flowOperations"`
	PayloadSchema  string   `json:"payloadSchema"`
}

func runEvents(e *env, args []string) error {
	fs := newFlags(e, "events", "events [--format text|json]\n\nLists the event catalogue, one line per event: name, delivery modes,\neffect families and modification targets the boundary can grant.")
	format := formatFlag(fs)
	ops, _, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if len(ops) > 0 {
		return usageError("events takes no operands")
	}
	events := gen.Events()
	if *format == "json" {
		enc := json.NewEncoder(e.stdout)
		for _, info := range events {
			l := eventLine{Name: string(info.Name), PayloadSchema: info.PayloadSchema,
				Modes: strs(info.Modes), EffectFamilies: strs(info.EffectFamilies), ModifyTargets: strs(info.ModifyTargets),
				FlowOperations: append([]string{}, info.FlowOperations...)}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tMODES\tEFFECTS\tMODIFY TARGETS")
	for _, info := range events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", info.Name, join(strs(info.Modes)), join(strs(info.EffectFamilies)), join(strs(info.ModifyTargets)))
	}
	return tw.Flush()
}

func strs[T ~string](in []T) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		out = append(out, string(v))
	}
	return out
}

func join(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}
