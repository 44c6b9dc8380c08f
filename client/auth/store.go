package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Token is an access token with what the transport needs to use and renew
// it. It is what a [TokenStore] keeps.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"` // "Bearer" or "DPoP"
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scopes are the scopes the token was requested with.
	Scopes []string `json:"scopes,omitempty"`
	// Issuer is the authorization server that issued the token.
	Issuer string `json:"issuer"`
	// Resource is the resource identifier the token was issued for; the
	// token is only sent to URLs it covers.
	Resource string `json:"resource"`
	// TokenURL and ClientID are where and as whom the token is refreshed.
	TokenURL string `json:"token_url,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	// DPoPKey is the private JWK the token is bound to (token type DPoP).
	DPoPKey json.RawMessage `json:"dpop_key,omitempty"`
}

// Registration is a client registered with an authorization server by
// dynamic client registration (RFC 7591).
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
}

// Entry is everything stored for one MCP server.
type Entry struct {
	Token *Token `json:"token,omitempty"`
	// Registrations are keyed by the issuer identifier of the
	// authorization server that issued them: a registration is never used
	// with another authorization server.
	Registrations map[string]Registration `json:"registrations,omitempty"`
}

// TokenStore keeps the tokens and registrations of MCP servers, keyed by
// the server's URL. Implementations must be safe for concurrent use, and
// should keep entries confidential: they hold credentials.
type TokenStore interface {
	// Load returns the entry for key, or (nil, nil) when there is none.
	Load(ctx context.Context, key string) (*Entry, error)
	// Save replaces the entry for key.
	Save(ctx context.Context, key string, e *Entry) error
	// Delete forgets the entry for key. Deleting a missing entry is not an error.
	Delete(ctx context.Context, key string) error
}

// MemoryStore is a [TokenStore] in memory; the zero value is ready to use.
// It is the default store of a [Transport].
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *MemoryStore) Load(_ context.Context, key string) (*Entry, error) {
	s.mu.Lock()
	b, ok := s.m[key]
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

func (s *MemoryStore) Save(_ context.Context, key string, e *Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = b
	return nil
}

func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
	return nil
}

// FileStore is a [TokenStore] in one JSON file, created with mode 0600 in
// a directory created with mode 0700. Writes replace the file atomically.
// It refuses a file that others can read or write. Processes sharing the
// file do not lock it: the last writer wins.
type FileStore struct {
	// Path is the file's name.
	Path string

	mu sync.Mutex
}

// maxStoreBytes bounds the file a FileStore reads.
const maxStoreBytes = 4 << 20

func (s *FileStore) read() (map[string]*Entry, error) {
	f, err := os.Open(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Entry{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("auth: token file %s is accessible to other users (mode %v); run chmod 600 on it", s.Path, st.Mode().Perm())
	}
	if st.Size() > maxStoreBytes {
		return nil, fmt.Errorf("auth: token file %s is larger than %d bytes", s.Path, maxStoreBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, err
	}
	m := map[string]*Entry{}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("auth: token file %s is not valid JSON", s.Path)
		}
	}
	return m, nil
}

func (s *FileStore) write(m map[string]*Entry) error {
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.Path)
}

func (s *FileStore) Load(_ context.Context, key string) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	return m[key], nil
}

func (s *FileStore) Save(_ context.Context, key string, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	m[key] = e
	return s.write(m)
}

func (s *FileStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := m[key]; !ok {
		return nil
	}
	delete(m, key)
	return s.write(m)
}

// Keys lists the servers the file has entries for.
func (s *FileStore) Keys() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys, nil
}
