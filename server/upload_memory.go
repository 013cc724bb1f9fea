package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
)

// MemoryStorage is a [Storage] that keeps committed uploads in memory, for
// tests and examples. It is not durable, never forgets what it was given
// (retention grows without bound) and holds each staged body in memory
// until it is committed or aborted. The zero value is ready to use; it is
// safe for concurrent use.
type MemoryStorage struct {
	mu     sync.Mutex
	refs   map[string]memoryUpload // by reference, across scopes
	staged int
}

type memoryUpload struct {
	scope   string
	receipt UploadReceipt
	data    []byte
}

// Create implements [Storage].
func (m *MemoryStorage) Create(ctx context.Context, scope string, size int64) (Staged, error) {
	m.mu.Lock()
	m.staged++
	m.mu.Unlock()
	return &memoryStaged{m: m, scope: scope}, nil
}

// Open implements [Storage].
func (m *MemoryStorage) Open(ctx context.Context, scope, ref string) (io.ReadCloser, UploadReceipt, error) {
	m.mu.Lock()
	u, ok := m.refs[ref]
	m.mu.Unlock()
	if !ok || u.scope != scope {
		return nil, UploadReceipt{}, ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(u.data)), u.receipt, nil
}

// Staging returns the number of uploads created and not yet committed or
// aborted.
func (m *MemoryStorage) Staging() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.staged
}

// Len returns the number of committed uploads, in all scopes.
func (m *MemoryStorage) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.refs)
}

// memoryStaged is an upload in progress in a MemoryStorage.
type memoryStaged struct {
	m     *MemoryStorage
	scope string
	buf   bytes.Buffer
	ended bool
}

var errStagedEnded = errors.New("server: staged upload already committed or aborted")

func (s *memoryStaged) Write(p []byte) (int, error) {
	if s.ended {
		return 0, errStagedEnded
	}
	return s.buf.Write(p)
}

func (s *memoryStaged) Commit(ctx context.Context, receipt UploadReceipt) error {
	if s.ended {
		return errStagedEnded
	}
	if int64(s.buf.Len()) != receipt.Size {
		return errors.New("server: staged size differs from the receipt")
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if _, dup := s.m.refs[receipt.Ref]; dup {
		return errors.New("server: reference already bound")
	}
	if s.m.refs == nil {
		s.m.refs = make(map[string]memoryUpload)
	}
	s.m.refs[receipt.Ref] = memoryUpload{scope: s.scope, receipt: receipt, data: s.buf.Bytes()}
	s.m.staged--
	s.ended = true
	return nil
}

func (s *memoryStaged) Abort() error {
	if s.ended {
		return nil
	}
	s.ended = true
	s.buf = bytes.Buffer{}
	s.m.mu.Lock()
	s.m.staged--
	s.m.mu.Unlock()
	return nil
}
