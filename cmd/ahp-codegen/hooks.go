package main

// renderHooksEvents renders hooks/events_gen.go: the per-event input types
// and Hooks methods. It returns nil while the hooks package does not exist.
func renderHooksEvents(m *model) ([]byte, error) {
	return nil, nil
}
