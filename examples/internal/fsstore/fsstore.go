// Package fsstore is a file-system [server.Storage] for the examples: each
// committed upload is a pair of files under a root directory, one for the
// bytes and one for the receipt, in a directory per scope.
//
// Layout under the root:
//
//	staging/upload-*          bytes of uploads in progress (removed on commit or abort)
//	scopes/<sha256(scope)>/   one directory per scope, named by the digest of the scope
//	    <ref>.data            the committed bytes
//	    <ref>.json            {"size":N,"sha256":"..."}, written last: the commit point
//
// A commit links the staged file to <ref>.data and then the receipt to
// <ref>.json; both links fail if the name exists, so a reference is never
// rebound. Open looks for the receipt first, so a crash between the two
// links leaves an orphan that is never served. Files are created 0600 and
// directories 0700. It does not expire, delete or count anything: retention
// and quotas are the application's.
package fsstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agenthooks/agenthooks-go/server"
)

// Store is a [server.Storage] on the file system. Create one with [New]; it
// is safe for concurrent use.
type Store struct {
	staging string
	scopes  string
}

var _ server.Storage = (*Store)(nil)

// New returns a Store under root, creating its directories.
func New(root string) (*Store, error) {
	s := &Store{staging: filepath.Join(root, "staging"), scopes: filepath.Join(root, "scopes")}
	for _, dir := range []string{s.staging, s.scopes} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("fsstore: %w", err)
		}
	}
	return s, nil
}

// scopeDir is the directory of scope: named by its digest, so that any
// scope string is a safe file name.
func (s *Store) scopeDir(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(s.scopes, hex.EncodeToString(sum[:]))
}

// validRef reports whether ref is a safe file name: 1 to 128 ASCII letters,
// digits, '-' or '_'. The receiver's references are; anything else was not
// allocated by it.
func validRef(ref string) bool {
	if ref == "" || len(ref) > 128 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// meta is the content of a <ref>.json file.
type meta struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Create implements [server.Storage]: the bytes go to a new file under
// staging/.
func (s *Store) Create(ctx context.Context, scope string, size int64) (server.Staged, error) {
	f, err := os.CreateTemp(s.staging, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("fsstore: %w", err)
	}
	return &staged{s: s, scope: scope, f: f}, nil
}

// Open implements [server.Storage].
func (s *Store) Open(ctx context.Context, scope, ref string) (io.ReadCloser, server.UploadReceipt, error) {
	if !validRef(ref) {
		return nil, server.UploadReceipt{}, server.ErrNotFound
	}
	dir := s.scopeDir(scope)
	raw, err := os.ReadFile(filepath.Join(dir, ref+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, server.UploadReceipt{}, server.ErrNotFound
	}
	if err != nil {
		return nil, server.UploadReceipt{}, fmt.Errorf("fsstore: %w", err)
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, server.UploadReceipt{}, fmt.Errorf("fsstore: receipt of %s: %w", ref, err)
	}
	f, err := os.Open(filepath.Join(dir, ref+".data"))
	if err != nil {
		return nil, server.UploadReceipt{}, fmt.Errorf("fsstore: %w", err)
	}
	return f, server.UploadReceipt{Ref: ref, Size: m.Size, SHA256: m.SHA256}, nil
}

// staged is an upload in progress: an open file under staging/.
type staged struct {
	s     *Store
	scope string
	f     *os.File
	ended bool
}

var errEnded = errors.New("fsstore: upload already committed or aborted")

func (st *staged) Write(p []byte) (int, error) {
	if st.ended {
		return 0, errEnded
	}
	return st.f.Write(p)
}

// Commit makes the staged bytes durable (fsync), then links them and their
// receipt into the scope's directory.
func (st *staged) Commit(ctx context.Context, rc server.UploadReceipt) error {
	if st.ended {
		return errEnded
	}
	if !validRef(rc.Ref) {
		return errors.New("fsstore: reference is not a safe file name")
	}
	if err := st.f.Sync(); err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}
	if err := st.f.Close(); err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}
	if info, err := os.Stat(st.f.Name()); err != nil || info.Size() != rc.Size {
		return errors.New("fsstore: staged size differs from the receipt")
	}
	raw, err := json.Marshal(meta{Size: rc.Size, SHA256: rc.SHA256})
	if err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}
	mf, err := os.CreateTemp(st.s.staging, "receipt-*")
	if err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}
	defer os.Remove(mf.Name())
	_, err = mf.Write(raw)
	if err == nil {
		err = mf.Sync()
	}
	if cerr := mf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}

	dir := st.s.scopeDir(st.scope)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("fsstore: %w", err)
	}
	data := filepath.Join(dir, rc.Ref+".data")
	if err := os.Link(st.f.Name(), data); err != nil { // fails if the name exists
		return fmt.Errorf("fsstore: %w", err)
	}
	if err := os.Link(mf.Name(), filepath.Join(dir, rc.Ref+".json")); err != nil {
		_ = os.Remove(data)
		return fmt.Errorf("fsstore: %w", err)
	}
	syncDir(dir)
	st.ended = true
	_ = os.Remove(st.f.Name())
	return nil
}

// Abort removes the staged file.
func (st *staged) Abort() error {
	if st.ended {
		return nil
	}
	st.ended = true
	_ = st.f.Close() // already closed after a failed Commit
	if err := os.Remove(st.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("fsstore: %w", err)
	}
	return nil
}

// syncDir makes the new names in dir durable, where the platform can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
