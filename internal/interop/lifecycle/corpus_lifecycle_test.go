package lifecycle

// lifecycleSpecs is the lifecycle corpus: held requests, acquisition and
// acceptance, cancellation, late and duplicate responses, stdio framing,
// invalid responses and the content receiver.
func lifecycleSpecs() []*spec {
	in := func(id string) obj { return obj{"path": id + ".txt", "task": 1} }
	var specs []*spec

	// Held request, released, acquired, accepted: one response per
	// effect family, published only at acceptance.
	held := func(id, desc string, effects []obj, out obj) *spec {
		a := id + "-a"
		return &spec{id: id, desc: desc, tags: []string{"acceptance"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: respond(a, effects...)},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": out},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
			before:    [][2]string{{k(KindReceived, a), k(KindReplied, a)}, {k(KindReplied, a), k(KindAcquired, a)}, {k(KindAcquired, a), k(KindAccepted, a)}},
		}
	}
	specs = append(specs,
		held("lc-accept-no-effect", "a held request released with no effects: the synthetic host allows and executes once", nil,
			accepted("allow", true, in("lc-accept-no-effect-a"))),
		held("lc-accept-allow", "accepted allow", []obj{allow()}, accepted("allow", true, in("lc-accept-allow-a"))),
		held("lc-accept-deny", "accepted deny refuses execution", []obj{deny("policy")}, accepted("deny", false, in("lc-accept-deny-a"))),
		held("lc-accept-ask", "accepted ask stays pending, unexecuted", []obj{ask()}, accepted("ask", false, in("lc-accept-ask-a"))),
		held("lc-accept-message", "accepted messages in order", []obj{message("first"), message("second")},
			accepted("allow", true, in("lc-accept-message-a"), "first", "second")),
		held("lc-accept-modify-merge", "accepted shallow merge of the input", []obj{merge(obj{"path": "safe.txt", "mode": nil})},
			accepted("allow", true, obj{"path": "safe.txt", "task": 1, "mode": nil})),
		held("lc-accept-modify-replace", "accepted replacement of the input", []obj{replace(obj{"task": 2})},
			accepted("allow", true, obj{"task": 2})),
		held("lc-accept-return", "accepted return supplies the result and skips execution", []obj{ret(obj{"written": false})},
			with(accepted("allow", false, in("lc-accept-return-a")), "result", obj{"written": false})),
		held("lc-accept-inject", "accepted injection is staged, in order", []obj{{"type": "inject", "target": "context", "operation": "append", "deliverAt": "now", "value": []obj{{"id": "ctx-now", "role": "user", "parts": []obj{textItem("ctx-now-t", "now")}}}}},
			with(accepted("allow", true, in("lc-accept-inject-a")), "injections", []obj{{"type": "inject", "target": "context", "operation": "append", "deliverAt": "now", "value": []obj{{"id": "ctx-now", "role": "user", "parts": []obj{textItem("ctx-now-t", "now")}}}}})),
		held("lc-accept-stop", "accepted flow stop prevents execution without changing the decision", []obj{stop("enough")},
			with(accepted("allow", false, in("lc-accept-stop-a")), "flow", "stop")),
	)

	// Cancellation before the reply: the late reply is drained and
	// discarded, nothing is published.
	{
		id := "lc-cancel-before-reply"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "logical cancellation before the reply; the late reply arrives and is discarded", tags: []string{"cancellation"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: respond(a, merge(obj{"path": "leak.txt"}), message("leak"))},
			steps:     []obj{beginHeld("a"), wait(a, 1), cancelStep("a"), release(a), drain("a")},
			outcomes:  obj{"a": cancelled(in(a))},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindCancelled, a): 1, k(KindDiscarded, a): 1},
			before:    [][2]string{{k(KindReceived, a), k(KindCancelled, a)}, {k(KindCancelled, a), k(KindReplied, a)}, {k(KindReplied, a), k(KindDiscarded, a)}},
		})
	}
	// Cancellation after acquisition, before acceptance: the privately
	// retained response of each family is discarded.
	afterAcquire := func(id, desc string, effects []obj) *spec {
		a := id + "-a"
		return &spec{id: id, desc: desc, tags: []string{"cancellation", "discard"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: respond(a, effects...)},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), cancelStep("a")},
			outcomes:  obj{"a": cancelled(in(a))},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindCancelled, a): 1, k(KindDiscarded, a): 1},
			before:    [][2]string{{k(KindAcquired, a), k(KindCancelled, a)}, {k(KindCancelled, a), k(KindDiscarded, a)}},
		}
	}
	specs = append(specs,
		afterAcquire("lc-discard-modify", "a retained modify is discarded by cancellation", []obj{merge(obj{"path": "leak.txt"})}),
		afterAcquire("lc-discard-message", "a retained message is discarded by cancellation", []obj{message("leak")}),
		afterAcquire("lc-discard-allow", "a retained allow is discarded: cancellation never authorizes", []obj{allow()}),
		afterAcquire("lc-discard-return", "a retained return is discarded: no supplied result", []obj{ret("leak")}),
	)
	// Continue and inject at turn.finish.before, retained then discarded.
	finish := func(id string) obj {
		return obj{"jsonrpc": "2.0", "id": id, "method": "hooks/intercept", "params": obj{"protocolVersion": "draft",
			"event": obj{"id": id, "source": fixtureSource, "type": "turn.finish.before", "time": fixtureTime, "turn": obj{"id": "turn-" + id},
				"outcome": "completed", "continuationCount": 0, "items": []obj{}},
			"capabilities": obj{"effects": []string{"modify", "flow", "message"}, "modify": obj{"response": obj{"replace": true, "merge": true}},
				"flow": obj{"operations": []string{"stop", "continue"}, "remainingContinuations": 3, "continuationCount": 0, "maxContinuations": 3}}}}
	}
	injectValue := []obj{{"id": "ctx1", "role": "user", "parts": []obj{textItem("ctx1-t", "remember the plan")}}}
	finishCancelled := obj{"state": "cancelled", "decision": "deny", "executed": false, "messages": []string{},
		"continuationInstructions": []string{}, "continuationRemaining": 3, "injections": []obj{},
		"failures": []obj{failure("intercept", "cancelled", "interrupted")}}
	{
		id := "lc-discard-continue"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a retained continue at turn.finish.before is discarded by cancellation: no continuation consumed", tags: []string{"cancellation", "discard"},
			requests:  obj{"a": finish(a)},
			responses: obj{a: respond(a, obj{"type": "flow", "operation": "continue", "instruction": "one more step"})},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), cancelStep("a")},
			outcomes:  obj{"a": finishCancelled},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindCancelled, a): 1, k(KindDiscarded, a): 1},
		})
	}
	specs = append(specs, afterAcquire("lc-discard-inject", "a retained inject is discarded by cancellation: nothing scheduled",
		[]obj{{"type": "inject", "target": "context", "operation": "append", "deliverAt": "next_turn", "value": injectValue}}))
	{
		id := "lc-accept-continue"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "accepted continues at turn.finish.before: instructions accumulate, one continuation consumed", tags: []string{"acceptance"},
			requests:  obj{"a": finish(a)},
			responses: obj{a: respond(a, obj{"type": "flow", "operation": "continue", "instruction": "check the tests"}, obj{"type": "flow", "operation": "continue", "instruction": "then stop"})},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes: obj{"a": obj{"state": "accepted", "decision": "allow", "executed": false, "messages": []string{}, "flow": "continue",
				"continuationInstructions": []string{"check the tests", "then stop"}, "continuationRemaining": 2, "injections": []obj{}}},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
		})
	}
	// Attempted fail-open fallback after cancellation: a fail-open
	// interceptor that is cancelled does not fall open.
	{
		id := "lc-cancel-no-fail-open-fallback"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "cancellation of a fail-open interceptor's pending request denies; it never falls back to the fail-open path", tags: []string{"cancellation"},
			chain:     obj{"subscriptions": []obj{{"name": "open", "mode": "intercept", "failurePolicy": "fail-open"}}},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: respond(a, allow())},
			steps:     []obj{beginHeld("a"), wait(a, 1), cancelStep("a"), release(a), drain("a")},
			outcomes:  obj{"a": cancelled(in(a))},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindCancelled, a): 1, k(KindDiscarded, a): 1},
		})
	}
	// A late response of an old request while a different one is pending.
	{
		id := "lc-late-old-response"
		a, b := id+"-a", id+"-b"
		specs = append(specs, &spec{id: id, desc: "the old request's late reply arrives while the next request is pending; it is discarded and the next request gets its own response", tags: []string{"late"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil), "b": request(toolEvent(b, in(b)), nil)},
			responses: obj{a: respond(a, deny("old")), b: respond(b, merge(obj{"path": "b-safe.txt"}))},
			steps:     []obj{beginHeld("a"), wait(a, 1), cancelStep("a"), beginHeld("b"), wait(b, 1), release(a), drain("a"), release(b), acquire("b"), accept("b")},
			outcomes:  obj{"a": cancelled(in(a)), "b": accepted("allow", true, obj{"path": "b-safe.txt", "task": 1})},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindCancelled, a): 1, k(KindDiscarded, a): 1,
				k(KindReceived, b): 1, k(KindReplied, b): 1, k(KindAcquired, b): 1, k(KindAccepted, b): 1},
			before: [][2]string{{k(KindReceived, b), k(KindReplied, a)}, {k(KindDiscarded, a), k(KindReplied, b)}},
		})
	}
	// Duplicate transport attempts: the first valid response is retained,
	// the duplicate's different effects are discarded and never published.
	{
		id := "lc-duplicate-first-retained"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a duplicate transport attempt (same id) gets a different response; the first valid response is retained and published once", tags: []string{"duplicate"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: []obj{respond(a, message("first")), respond(a, deny("duplicate"), message("second"))}},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), duplicate("a"), accept("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a), "first")},
			counts:    map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindAcquired, a): 1, k(KindDiscarded, a): 1, k(KindAccepted, a): 1},
			before:    [][2]string{{k(KindAcquired, a), k(KindDiscarded, a)}, {k(KindDiscarded, a), k(KindAccepted, a)}},
		})
	}
	{
		id := "lc-duplicate-after-acceptance"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a duplicate attempt after acceptance causes no second publication", tags: []string{"duplicate"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: []obj{respond(a, merge(obj{"path": "one.txt"})), respond(a, merge(obj{"path": "two.txt"}))}},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a"), duplicate("a")},
			outcomes:  obj{"a": accepted("allow", true, obj{"path": "one.txt", "task": 1})},
			counts:    map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindAcquired, a): 1, k(KindDiscarded, a): 1, k(KindAccepted, a): 1},
			before:    [][2]string{{k(KindAccepted, a), k(KindDiscarded, a)}},
		})
	}
	// Reverse-order replies, two staged payloads, reverse acceptance,
	// acceptance correlated to the requested id.
	two := func(id, desc string, steps []obj, before [][2]string) *spec {
		a, b := id+"-a", id+"-b"
		return &spec{id: id, desc: desc, tags: []string{"ordering"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil), "b": request(toolEvent(b, in(b)), nil)},
			responses: obj{a: respond(a, merge(obj{"path": "a-staged.txt"}), message("for a")), b: respond(b, replace(obj{"task": 7}), message("for b"))},
			steps:     steps,
			outcomes: obj{"a": accepted("allow", true, obj{"path": "a-staged.txt", "task": 1}, "for a"),
				"b": accepted("allow", true, obj{"task": 7}, "for b")},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1,
				k(KindReceived, b): 1, k(KindReplied, b): 1, k(KindAcquired, b): 1, k(KindAccepted, b): 1},
			before: before,
		}
	}
	{
		id := "lc-reverse-replies"
		a, b := id+"-a", id+"-b"
		specs = append(specs, two(id, "two pending requests answered in reverse order; each retains its own payload",
			[]obj{beginHeld("a"), beginHeld("b"), wait(a, 1), wait(b, 1), release(b), acquire("b"), release(a), acquire("a"), accept("a"), accept("b")},
			[][2]string{{k(KindReplied, b), k(KindReplied, a)}, {k(KindAccepted, a), k(KindAccepted, b)}}))
	}
	{
		id := "lc-reverse-acceptance"
		a, b := id+"-a", id+"-b"
		specs = append(specs, two(id, "two distinct staged payloads accepted in reverse order",
			[]obj{beginHeld("a"), beginHeld("b"), wait(a, 1), wait(b, 1), release(a), release(b), acquire("a"), acquire("b"), accept("b"), accept("a")},
			[][2]string{{k(KindAcquired, a), k(KindAccepted, b)}, {k(KindAccepted, b), k(KindAccepted, a)}}))
	}
	{
		id := "lc-accept-correlated"
		a, b := id+"-a", id+"-b"
		specs = append(specs, two(id, "acceptance is correlated to the requested id, not to whichever reply arrived last",
			[]obj{beginHeld("a"), beginHeld("b"), wait(a, 1), wait(b, 1), release(a), acquire("a"), release(b), acquire("b"), accept("a"), accept("b")},
			[][2]string{{k(KindReplied, a), k(KindReplied, b)}, {k(KindReplied, b), k(KindAccepted, a)}}))
	}
	// Post-publication interruption preserves completed effects.
	{
		id := "lc-cancel-after-publication"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "cancellation after acceptance preserves the published effects and effective input", tags: []string{"cancellation"},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: respond(a, merge(obj{"path": "kept.txt"}), message("kept"))},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a"), cancelStep("a")},
			outcomes:  obj{"a": accepted("allow", true, obj{"path": "kept.txt", "task": 1}, "kept")},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1, k(KindCancelled, a): 1},
			before:    [][2]string{{k(KindAccepted, a), k(KindCancelled, a)}},
		})
	}
	// Stdio framing: unsolicited unknown and stale frames before the live
	// reply are discarded without consuming it.
	{
		id := "lc-stdio-unsolicited-unknown"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "stdio: an unsolicited frame with an unknown id precedes the live reply and is discarded", tags: []string{"framing"},
			transports:  []string{"stdio"},
			requests:    obj{"a": request(toolEvent(a, in(a)), nil)},
			responses:   obj{a: respond(a, message("live"))},
			unsolicited: obj{a: []obj{respond("unknown-frame", deny("unsolicited"))}},
			steps:       []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:    obj{"a": accepted("allow", true, in(a), "live")},
			counts:      map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
		})
	}
	{
		id := "lc-stdio-unsolicited-stale"
		a, b := id+"-a", id+"-b"
		specs = append(specs, &spec{id: id, desc: "stdio: a stale frame repeating an answered id precedes the next request's reply and is discarded", tags: []string{"framing"},
			transports:  []string{"stdio"},
			requests:    obj{"a": request(toolEvent(a, in(a)), nil), "b": request(toolEvent(b, in(b)), nil)},
			responses:   obj{a: respond(a, message("a")), b: respond(b, message("b"))},
			unsolicited: obj{b: []obj{respond(a, deny("stale"))}},
			steps:       []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a"), beginHeld("b"), wait(b, 1), release(b), acquire("b"), accept("b")},
			outcomes:    obj{"a": accepted("allow", true, in(a), "a"), "b": accepted("allow", true, in(b), "b")},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1,
				k(KindReceived, b): 1, k(KindReplied, b): 1, k(KindAcquired, b): 1, k(KindAccepted, b): 1},
		})
	}
	// Invalid responses: mis-correlated (HTTP), schema-invalid, JSON-RPC
	// error; fail-closed denies, fail-open continues.
	{
		id := "lc-mismatched-id"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a reply with another id is an adversarial fixture replied unchanged; the client rejects it (fail-closed denies)", tags: []string{"negative", "correlation-invalid"},
			transports: []string{"http"},
			requests:   obj{"a": request(toolEvent(a, in(a)), nil)},
			responses:  obj{a: respond("not-"+a, allow())},
			steps:      []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:   obj{"a": with(accepted("deny", false, in(a)), "failures", []obj{failure("intercept", "protocol_rejection", "id_mismatch")})},
			counts:     map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAccepted, a): 1},
		})
	}
	invalid := func(id, desc, policy string, resp func(string) obj, fail obj, out func(string) obj) *spec {
		a := id + "-a"
		return &spec{id: id, desc: desc, tags: []string{"negative"},
			chain:     obj{"subscriptions": []obj{{"name": "only", "mode": "intercept", "failurePolicy": policy}}},
			requests:  obj{"a": request(toolEvent(a, in(a)), nil)},
			responses: obj{a: resp(a)},
			steps:     []obj{beginHeld("a"), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": with(out(a), "failures", []obj{fail})},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAccepted, a): 1},
		}
	}
	unknownEffect := func(a string) obj {
		return respond(a, message("must not leak"), obj{"type": "teleport"})
	}
	specs = append(specs,
		invalid("lc-invalid-fail-closed", "a schema-invalid response (an unknown effect after a valid message) is rejected whole; fail-closed denies, the message does not leak",
			"fail-closed", unknownEffect, failure("intercept", "protocol_rejection", "schema"), func(a string) obj { return accepted("deny", false, in(a)) }),
		invalid("lc-invalid-fail-open", "the same invalid response under fail-open: rejected whole, the call continues to allow",
			"fail-open", unknownEffect, failure("intercept", "protocol_rejection", "schema"), func(a string) obj { return accepted("allow", true, in(a)) }),
		invalid("lc-rpc-error-fail-closed", "a JSON-RPC error reply is an operational failure; fail-closed denies",
			"fail-closed", func(a string) obj { return rpcError(a, -32003) }, failure("intercept", "remote_rpc", "jsonrpc_error"), func(a string) obj { return accepted("deny", false, in(a)) }),
	)
	// An incoming deny is sticky: decision-making never begins, and the
	// uncalled interceptor is owed the observation (a denied boundary stays
	// observable).
	{
		id := "lc-initial-deny-observed"
		a := id + "-a"
		ev := toolEvent(a, in(a))
		specs = append(specs, &spec{id: id, desc: "an incoming deny ends decision-making before it begins; the uncalled interceptor observes the denied proposal", tags: []string{"observation"},
			requests:  obj{"a": request(ev, obj{"permission": "deny", "candidate": nil})},
			responses: obj{},
			steps:     []obj{begin("a"), await("a"), waitObs(a, 1)},
			outcomes:  obj{"a": accepted("deny", false, in(a))},
			counts:    map[string]int{k(KindObserved, a): 1, k(KindEmitted, a): 1, k(KindAccepted, a): 1},
			observed:  []obj{ev},
		})
	}
	// Observe steps: items override, and the malicious observer reply
	// that the client ignores.
	{
		id := "lc-observe-items"
		a, b := id+"-a", id+"-b"
		items := []obj{textItem("note", "observed note"), {"id": "think", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "step by step", "category": "reasoning"}}
		evA := toolEvent(a, in(a))
		viewA := toolEvent(a, in(a), items...)
		specs = append(specs, &spec{id: id, desc: "an observation-only call with an items override; the receiver's unsolicited deny reply (stdio) or 204 (HTTP) never decides, and the next request is unaffected", tags: []string{"observation"},
			requests:  obj{"a": request(evA, nil), "b": request(toolEvent(b, in(b)), nil)},
			responses: obj{b: respond(b, message("b ok"))},
			steps: []obj{with(observeStep("a"), "items", items), await("a"), waitObs(a, 1),
				beginHeld("b"), wait(b, 1), release(b), acquire("b"), accept("b")},
			outcomes: obj{"a": obj{"state": "observed"}, "b": accepted("allow", true, in(b), "b ok")},
			counts: map[string]int{k(KindObserved, a): 1, k(KindEmitted, a): 1,
				k(KindReceived, b): 1, k(KindReplied, b): 1, k(KindAcquired, b): 1, k(KindAccepted, b): 1},
			observed: []obj{viewA},
		})
	}
	// Content: a real attachment uploaded by the SDK before the event that
	// refers to it; upload probes of the receiver.
	{
		id := "lc-upload-attachment"
		a := id + "-a"
		body := []byte("\x89PNG\r\n\x1a\n" + id)
		specs = append(specs, &spec{id: id, desc: "an owned attachment selected as body is uploaded (201 with the receiver's ref) before the event that refers to it", tags: []string{"content"},
			requests:  obj{"a": request(toolEvent(a, in(a), textItem("caption", "a diagram"), attachmentItem("img", "image/png")), nil)},
			responses: obj{a: respond(a, allow())},
			steps:     []obj{withAttachment(beginHeld("a"), "img", "image/png", body), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a))},
			uploads:   []obj{upload(201, body)},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
			upProof:   []obj{{"subscription": "body", "status": 201, "size": len(body), "sha256": digest(body)}},
		})
	}
	{
		id := "lc-upload-skill-reasoning"
		a := id + "-a"
		body := []byte("%PDF-1.7\n" + id)
		att := attachmentItem("skill", "application/pdf")
		att["category"] = "skill"
		specs = append(specs, &spec{id: id, desc: "reasoning, skill and native-labelled content take the normal content path", tags: []string{"content"},
			requests: obj{"a": request(toolEvent(a, in(a), obj{"id": "why", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "because", "category": "reasoning"},
				att, obj{"id": "native-note", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "native label", "category": "native"}), nil)},
			responses: obj{a: respond(a)},
			steps:     []obj{withAttachment(beginHeld("a"), "skill", "application/pdf", body), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a))},
			uploads:   []obj{upload(201, body)},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
			upProof:   []obj{{"subscription": "body", "status": 201, "size": len(body), "sha256": digest(body)}},
		})
	}
	{
		id := "lc-content-gap"
		a := id + "-a"
		body := []byte("\x89PNG\r\n\x1a\n" + id)
		specs = append(specs, &spec{id: id, desc: "a body selection without an upload endpoint gets an explicit canonical content gap, no upload", tags: []string{"content"},
			chain:     obj{"subscriptions": []obj{{"name": "gap", "mode": "intercept", "failurePolicy": "fail-closed", "noUpload": true}}},
			requests:  obj{"a": request(toolEvent(a, in(a), attachmentItem("img", "image/png")), nil)},
			responses: obj{a: respond(a)},
			steps:     []obj{withAttachment(beginHeld("a"), "img", "image/png", body), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a))},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
		})
	}
	{
		id := "lc-metadata-selection"
		a := id + "-a"
		body := []byte("\x89PNG\r\n\x1a\n" + id)
		specs = append(specs, &spec{id: id, desc: "a metadata selection neither uploads nor discloses the body", tags: []string{"content"},
			chain:     obj{"subscriptions": []obj{{"name": "meta", "mode": "intercept", "failurePolicy": "fail-closed", "content": obj{"default": "metadata"}}}},
			requests:  obj{"a": request(toolEvent(a, in(a), textItem("caption", "hidden"), attachmentItem("img", "image/png")), nil)},
			responses: obj{a: respond(a)},
			steps:     []obj{withAttachment(beginHeld("a"), "img", "image/png", body), wait(a, 1), release(a), acquire("a"), accept("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a))},
			counts:    map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindAcquired, a): 1, k(KindAccepted, a): 1},
		})
	}
	probe := func(id, desc string, body []byte, extra obj, status int, declared obj) *spec {
		var sub any = "body"
		if status == 401 {
			sub = nil
		}
		return &spec{id: id, desc: desc, tags: []string{"content", "receiver"},
			requests: obj{}, responses: obj{},
			steps:    []obj{uploadStep(body, extra)},
			outcomes: obj{},
			uploads:  []obj{declared},
			counts:   map[string]int{},
			upProof:  []obj{with(declared, "subscription", sub)},
		}
	}
	{
		b := []byte("raw probe bytes: valid")
		specs = append(specs, probe("lc-upload-probe-valid", "a raw upload with the configured credential is confirmed 201", b, nil, 201, upload(201, b)))
		b = []byte("raw probe bytes: empty next")
		specs = append(specs, probe("lc-upload-probe-empty", "an empty body is a valid upload", []byte{}, obj{"declaredSha256": digest(nil)}, 201, upload(201, nil)))
		b = []byte("raw probe bytes: bad credential")
		specs = append(specs, probe("lc-upload-bad-credential", "an invalid upload credential is refused 401", b, obj{"credential": "invalid"}, 401, upload(401, b)))
		b = []byte("raw probe bytes: no credential")
		specs = append(specs, probe("lc-upload-no-credential", "an upload without credentials is refused 401", b, obj{"credential": "none"}, 401, upload(401, b)))
		b = []byte("raw probe bytes: wrong hash")
		wrong := digest([]byte("other bytes"))
		specs = append(specs, probe("lc-upload-wrong-hash", "a declared SHA-256 that the bytes do not have is refused 400", b, obj{"declaredSha256": wrong}, 400,
			obj{"status": 400, "size": len(b), "sha256": wrong}))
		b = []byte("raw probe bytes: wrong size")
		specs = append(specs, probe("lc-upload-wrong-size", "a declared Content-Length beyond the body is refused 400", b, obj{"declaredSize": len(b) + 5}, 400,
			obj{"status": 400, "size": len(b) + 5, "sha256": digest(b)}))
	}
	{
		id := "lc-upload-exact-retry"
		b := []byte("raw probe bytes: exact retry")
		specs = append(specs, &spec{id: id, desc: "an exact retry of the same bytes is confirmed again, under a new receiver-allocated reference", tags: []string{"content", "receiver"},
			requests: obj{}, responses: obj{},
			steps:    []obj{uploadStep(b, nil), uploadStep(b, nil)},
			outcomes: obj{},
			uploads:  []obj{upload(201, b), upload(201, b)},
			counts:   map[string]int{},
			upProof: []obj{{"subscription": "body", "status": 201, "size": len(b), "sha256": digest(b)},
				{"subscription": "body", "status": 201, "size": len(b), "sha256": digest(b)}},
		})
	}
	// An event referring to content the receiver does not hold: HTTP 409,
	// stdio a JSON-RPC error; fail-closed denies either way.
	for _, tr := range []string{"http", "stdio"} {
		id := "lc-unknown-ref-" + tr
		a := id + "-a"
		fail := failure("intercept", "transport", "http_status")
		if tr == "stdio" {
			fail = failure("intercept", "remote_rpc", "jsonrpc_error")
		}
		specs = append(specs, &spec{id: id, desc: "an event body reference the receiver never confirmed is refused (" + tr + "); fail-closed denies", tags: []string{"content", "negative"},
			transports: []string{tr},
			requests:   obj{"a": request(toolEvent(a, in(a), refItem("img", "image/png", "never-uploaded")), nil)},
			responses:  obj{a: respond(a, allow())},
			steps:      []obj{begin("a"), await("a")},
			outcomes:   obj{"a": with(accepted("deny", false, in(a)), "failures", []obj{fail})},
			counts:     map[string]int{k(KindAccepted, a): 1},
		})
	}
	return specs
}
