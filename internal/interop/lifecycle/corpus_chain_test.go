package lifecycle

// chainSpecs is the observation-chain corpus: serial interceptors, owed
// observations of uncalled interceptors with their own selections,
// explicit observers with the final view, interruption and held observers.
func chainSpecs() []*spec {
	in := func(id string) obj { return obj{"path": id + ".txt", "task": 1} }
	note := func() obj { return textItem("note", "visible note") }
	// view returns the event as a receiver with the selection sees it.
	bodyView := func(id string, input obj) obj { return toolEvent(id, input, note()) }
	metaView := func(id string, input obj) obj {
		return toolEvent(id, input, obj{"id": "note", "kind": "text", "mediaType": "text/plain", "selection": "metadata", "size": len("visible note")})
	}
	omitView := func(id string, input obj) obj {
		return toolEvent(id, input, obj{"id": "note", "kind": "text", "mediaType": "text/plain", "selection": "omit"})
	}
	icpt := func(name, policy string, sel string) obj {
		return obj{"name": name, "mode": "intercept", "failurePolicy": policy, "content": obj{"default": sel}}
	}
	obs := func(name, sel string) obj {
		return obj{"name": name, "mode": "observe", "content": obj{"default": sel}}
	}
	var specs []*spec

	// A allows, B denies: C (uncalled, metadata) is owed the observation,
	// D (explicit observer, omit) gets the final view; A and B get no copy.
	{
		id := "chain-deny-owed"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "serial interceptors: the second denies, the uncalled third is owed the observation with its metadata selection, the explicit observer gets the final view with its own; called interceptors get no second copy", tags: []string{"chain"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-closed", "body"), icpt("C", "fail-closed", "metadata"), obs("D", "omit")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: []obj{respond(a, allow()), respond(a, deny("second says no"))}},
			steps:     []obj{begin("a"), wait(a, 1), release(a), wait(a, 2), await("a"), waitObs(a, 2)},
			outcomes:  obj{"a": accepted("deny", false, in(a))},
			counts: map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindObserved, a): 2, k(KindEmitted, a): 2,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			before:   [][2]string{{k(KindReplied, a), k(KindChainSettled, a)}, {k(KindChainSettled, a), k(KindObserved, a)}},
			observed: []obj{metaView(a, in(a)), omitView(a, in(a))},
		})
	}
	// Modifications chain serially; the observers see the accepted input.
	{
		id := "chain-modify-serial"
		a := id + "-a"
		final := obj{"path": "second.txt", "task": 1, "first": true}
		specs = append(specs, &spec{id: id, desc: "each interceptor receives the accepted effective input of the previous one; the observer sees the final effective input", tags: []string{"chain"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-closed", "body"), obs("D", "body")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: []obj{respond(a, merge(obj{"path": "first.txt", "first": true})), respond(a, merge(obj{"path": "second.txt"}), message("B saw first.txt"))}},
			steps:     []obj{begin("a"), wait(a, 1), release(a), wait(a, 2), await("a"), waitObs(a, 1)},
			outcomes:  obj{"a": accepted("allow", true, final, "B saw first.txt")},
			counts: map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindObserved, a): 1, k(KindEmitted, a): 1,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			observed: []obj{bodyView(a, final)},
		})
	}
	// A flow stop ends decision-making: B is owed.
	{
		id := "chain-stop-owed"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a flow stop ends decision-making; the uncalled interceptor is owed the observation", tags: []string{"chain"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-open", "omit")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: respond(a, stop("halt"))},
			steps:     []obj{begin("a"), wait(a, 1), release(a), await("a"), waitObs(a, 1)},
			outcomes:  obj{"a": with(accepted("allow", false, in(a)), "flow", "stop")},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 1, k(KindEmitted, a): 1,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			observed: []obj{omitView(a, in(a))},
		})
	}
	// A fail-closed failure denies: B is owed.
	{
		id := "chain-fail-closed-owed"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a fail-closed operational failure stops the chain with a denial; the uncalled interceptor is owed the observation", tags: []string{"chain", "negative"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-closed", "body")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: rpcError(a, -32004)},
			steps:     []obj{begin("a"), wait(a, 1), release(a), await("a"), waitObs(a, 1)},
			outcomes:  obj{"a": with(accepted("deny", false, in(a)), "failures", []obj{failure("intercept", "remote_rpc", "jsonrpc_error")})},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 1, k(KindEmitted, a): 1,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			observed: []obj{bodyView(a, in(a))},
		})
	}
	// A fail-open failure continues: B decides.
	{
		id := "chain-fail-open-continues"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "a fail-open failure is recorded and the chain continues to the next interceptor; nobody is owed", tags: []string{"chain", "negative"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-open", "body"), icpt("B", "fail-closed", "body")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: []obj{respond(a, obj{"type": "teleport"}), respond(a, message("B decided"))}},
			steps:     []obj{begin("a"), wait(a, 1), release(a), wait(a, 2), await("a")},
			outcomes:  obj{"a": with(accepted("allow", true, in(a), "B decided"), "failures", []obj{failure("intercept", "protocol_rejection", "schema")})},
			counts:    map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
		})
	}
	// Interruption while B is pending ends it at once: no observations,
	// A's accepted changes preserved; B's late reply is discarded.
	{
		id := "chain-interrupt-pending"
		a := id + "-a"
		kept := obj{"path": "kept.txt", "task": 1}
		specs = append(specs, &spec{id: id, desc: "interruption while the second interceptor is pending ends decision-making at once; the accepted first modification is preserved, no observations are initiated, the late reply is discarded", tags: []string{"chain", "interrupt"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-open", "body"), icpt("C", "fail-closed", "body"), obs("D", "body")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: []obj{respond(a, merge(obj{"path": "kept.txt"})), respond(a, allow())}},
			steps:     []obj{begin("a"), wait(a, 1), releaseFirst(a, 1), wait(a, 2), cancelStep("a"), release(a), drain("a")},
			outcomes:  obj{"a": cancelled(kept)},
			counts:    map[string]int{k(KindReceived, a): 2, k(KindReplied, a): 2, k(KindCancelled, a): 1, k(KindDiscarded, a): 1},
		})
	}
	// Held observers: recorded observer-blocked; settlement precedes them.
	{
		id := "chain-hold-observers"
		a := id + "-a"
		specs = append(specs, &spec{id: id, desc: "observers held by the receiver never delay settlement: the chain settles before the observations, which are blocked until released", tags: []string{"chain", "observers"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), obs("D", "body"), obs("E", "metadata")}, "holdObservers": true},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: respond(a, message("settled"))},
			steps:     []obj{begin("a"), wait(a, 1), release(a), waitObs(a, 2), release(a + "#observers"), await("a")},
			outcomes:  obj{"a": accepted("allow", true, in(a), "settled")},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 2, k(KindObserverBlocked, a): 2,
				k(KindEmitted, a): 2, k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			before:   [][2]string{{k(KindChainSettled, a), k(KindObserved, a)}, {k(KindObserved, a), k(KindObserverBlocked, a)}},
			observed: []obj{bodyView(a, in(a)), metaView(a, in(a))},
		})
	}
	// Interruption while observers are held: the call ends at once.
	for _, tr := range []string{"http", "stdio"} {
		id := "chain-interrupt-held-observers-" + tr
		a := id + "-a"
		emitted := 0
		if tr == "stdio" {
			emitted = 1 // a stdio notification is written, not awaited
		}
		// HTTP: the call waits for the held notification's answer, and the
		// interruption cuts it short (the SDK reports the interrupted call
		// with its accepted message and input, never authorizing). Stdio: a
		// notification is written, not answered, so the call has already
		// returned while the observer is still held; the cancellation after
		// it changes nothing.
		out := with(interrupted(in(a), "settled"), "failures", []obj{failure("observe", "cancelled", "interrupted")})
		steps := []obj{begin("a"), wait(a, 1), release(a), waitObs(a, 1), cancelStep("a"), release(a + "#observers")}
		counts := map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 1, k(KindObserverBlocked, a): 1,
			k(KindChainSettled, a): 1, k(KindCancelled, a): 1}
		if tr == "stdio" {
			out = accepted("allow", true, in(a), "settled")
			steps = []obj{begin("a"), wait(a, 1), release(a), waitObs(a, 1), await("a"), cancelStep("a"), release(a + "#observers")}
			counts[k(KindAccepted, a)] = 1
		}
		if emitted > 0 {
			counts[k(KindEmitted, a)] = emitted
		}
		specs = append(specs, &spec{id: id, desc: "interruption while an observer is held (" + tr + ") ends the call at once: best-effort observation never keeps interrupted execution alive", tags: []string{"chain", "observers", "interrupt"},
			transports: []string{tr},
			chain:      obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), obs("D", "body")}, "holdObservers": true},
			requests:   obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses:  obj{a: respond(a, message("settled"))},
			steps:      steps,
			outcomes:   obj{"a": out},
			counts:     counts,
			before:     [][2]string{{k(KindObserverBlocked, a), k(KindCancelled, a)}},
			observed:   []obj{bodyView(a, in(a))},
		})
	}
	// An explicit observer subscription on the backend of a called
	// interceptor still gets the final view (tracked by subscription).
	{
		id := "chain-explicit-observer-same-backend"
		a := id + "-a"
		final := obj{"path": "final.txt", "task": 1}
		specs = append(specs, &spec{id: id, desc: "an explicit observe subscription of the same backend as the called interceptor is not deduplicated: it gets the final view", tags: []string{"chain"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), obs("A-observer", "body")}},
			requests:  obj{"a": request(toolEvent(a, in(a), note()), nil)},
			responses: obj{a: respond(a, merge(obj{"path": "final.txt"}))},
			steps:     []obj{begin("a"), wait(a, 1), release(a), await("a"), waitObs(a, 1)},
			outcomes:  obj{"a": accepted("allow", true, final)},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 1, k(KindEmitted, a): 1,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			observed: []obj{bodyView(a, final)},
		})
	}
	// Owed observations carry their own selections and uploads: the owed
	// body receiver's upload precedes its notification.
	{
		id := "chain-owed-upload"
		a := id + "-a"
		body := []byte("\x89PNG\r\n\x1a\n" + id)
		att := attachmentItem("img", "image/png")
		bodyObs := toolEvent(a, in(a), att)
		bodyObs["items"].([]obj)[0] = obj{"id": "img", "kind": "attachment", "mediaType": "image/png", "selection": "body", "body": obj{"ref": "<receiver-ref>"}}
		metaObs := toolEvent(a, in(a), obj{"id": "img", "kind": "attachment", "mediaType": "image/png", "selection": "metadata"})
		specs = append(specs, &spec{id: id, desc: "after a denial the owed body interceptor's own upload precedes its observation, the owed metadata interceptor gets no body and no upload", tags: []string{"chain", "content"},
			chain:     obj{"subscriptions": []obj{icpt("A", "fail-closed", "body"), icpt("B", "fail-closed", "body"), icpt("C", "fail-open", "metadata")}},
			requests:  obj{"a": request(toolEvent(a, in(a), att), nil)},
			responses: obj{a: respond(a, deny("no"))},
			steps:     []obj{withAttachment(begin("a"), "img", "image/png", body), wait(a, 1), release(a), await("a"), waitObs(a, 2)},
			outcomes:  obj{"a": accepted("deny", false, in(a))},
			uploads:   []obj{upload(201, body), upload(201, body)},
			counts: map[string]int{k(KindReceived, a): 1, k(KindReplied, a): 1, k(KindObserved, a): 2, k(KindEmitted, a): 2,
				k(KindChainSettled, a): 1, k(KindAccepted, a): 1},
			observed: []obj{bodyObs, metaObs},
			upProof: []obj{{"subscription": "body", "status": 201, "size": len(body), "sha256": digest(body)},
				{"subscription": "body", "status": 201, "size": len(body), "sha256": digest(body)}},
		})
	}
	return specs
}
