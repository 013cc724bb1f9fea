package content

// Readers returns the number of Snapshot calls waiting on a's
// materialization (tests only).
func Readers(a *Attachment) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.readers
}
