// Package authtest is a loopback OAuth 2.0 token server for tests: it issues
// short-lived access tokens against key files it writes itself, so tests can
// exercise real credential code (JWT signing, refresh) without Google.
package authtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Secrets that the key files this package writes contain, so tests can assert
// they never appear in an error or a log.
const (
	RefreshToken = "authtest-refresh-token-SECRET"
	ClientSecret = "authtest-client-secret-SECRET"
	ClientEmail  = "uploader@authtest.iam.gserviceaccount.com"
)

// TokenServer is an OAuth 2.0 token endpoint on 127.0.0.1. It accepts the
// JWT-bearer grant of service-account keys (checking the signature) and the
// refresh-token grant of authorized-user files, and answers each with a new
// token. Safe for concurrent use.
type TokenServer struct {
	// URL is the token endpoint, the "token_uri" of the key files.
	URL string

	// ExpiresIn is the lifetime, in seconds, written in every answer.
	// golang.org/x/oauth2 treats a token as expired 10 s before its expiry,
	// so 11 makes each token usable for about one second.
	ExpiresIn int

	key *rsa.PrivateKey

	mu     sync.Mutex
	issued []string
	scopes []string
	fail   int
}

// NewTokenServer starts a token server closed by t.Cleanup. expiresIn is in
// seconds.
func NewTokenServer(t testing.TB, expiresIn int) *TokenServer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("authtest: generating RSA key: %v", err)
	}
	s := &TokenServer{ExpiresIn: expiresIn, key: key}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/token"
	return s
}

// Issued returns the tokens issued so far, oldest first.
func (s *TokenServer) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Scopes returns the scope requested with each grant, oldest first.
func (s *TokenServer) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.scopes...)
}

// FailWith makes every later grant fail with an OAuth error and this HTTP
// status (0 restores success).
func (s *TokenServer) FailWith(status int) {
	s.mu.Lock()
	s.fail = status
	s.mu.Unlock()
}

// ServiceAccountJSON returns a service-account key file whose token_uri is
// this server.
func (s *TokenServer) ServiceAccountJSON(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return mustJSON(t, map[string]string{
		"type":           "service_account",
		"project_id":     "authtest",
		"private_key_id": "authtest-key-1",
		"private_key":    string(pemKey),
		"client_email":   ClientEmail,
		"client_id":      "1234567890",
		"token_uri":      s.URL,
	})
}

// AuthorizedUserJSON returns an authorized-user file (as written by
// `gcloud auth application-default login`) whose token_uri is this server.
func (s *TokenServer) AuthorizedUserJSON(t testing.TB) []byte {
	t.Helper()
	return mustJSON(t, map[string]string{
		"type":          "authorized_user",
		"client_id":     "authtest-client.apps.googleusercontent.com",
		"client_secret": ClientSecret,
		"refresh_token": RefreshToken,
		"token_uri":     s.URL,
	})
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return b
}

func (s *TokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	scope, err := s.checkGrant(r.PostForm.Get("grant_type"), r.PostForm.Get)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant: "+err.Error())
		return
	}
	s.mu.Lock()
	if s.fail != 0 {
		s.mu.Unlock()
		oauthError(w, s.fail, "invalid_grant")
		return
	}
	tok := fmt.Sprintf("authtest-token-%d", len(s.issued)+1)
	s.issued = append(s.issued, tok)
	s.scopes = append(s.scopes, scope)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": s.ExpiresIn,
	})
}

// checkGrant validates a grant and returns the scope it asks for.
func (s *TokenServer) checkGrant(grant string, get func(string) string) (string, error) {
	switch grant {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		return s.checkJWT(get("assertion"))
	case "refresh_token":
		if get("refresh_token") != RefreshToken || get("client_secret") != ClientSecret {
			return "", fmt.Errorf("unknown refresh token or client")
		}
		return get("scope"), nil
	}
	return "", fmt.Errorf("unsupported grant_type %q", grant)
}

// checkJWT verifies an RS256 assertion with the server's public key and
// returns its scope claim.
func (s *TokenServer) checkJWT(assertion string) (string, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("assertion is not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", fmt.Errorf("bad signature encoding")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return "", fmt.Errorf("bad signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("bad claims encoding")
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return "", fmt.Errorf("bad claims")
	}
	if claims.Iss != ClientEmail || claims.Aud != s.URL {
		return "", fmt.Errorf("claims iss/aud do not match the key")
	}
	return claims.Scope, nil
}

func oauthError(w http.ResponseWriter, status int, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
}
