package hostapp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// defaultKeys are the demo credentials: one bearer key per demo tenant.
const defaultKeys = "acme=demo-acme,globex=demo-globex"

// tenantKey is one -keys entry.
type tenantKey struct {
	Tenant string
	Key    string
}

// parseKeys reads a -keys value "tenant=key,...". Tenants follow the
// tenant-segment grammar (without the anon: lane, which no key belongs to),
// keys are RFC 6750 token68 strings, and neither may repeat. Error texts
// name entries and tenants, never a key.
func parseKeys(spec string) ([]tenantKey, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("no keys given; want tenant=key[,tenant=key...]")
	}
	var out []tenantKey
	tenants := map[string]bool{}
	keys := map[string]string{}
	for i, entry := range strings.Split(spec, ",") {
		n := i + 1
		tenant, key, ok := strings.Cut(strings.TrimSpace(entry), "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("entry %d: want tenant=key", n)
		case !isolation.ValidTenant(tenant) || strings.HasPrefix(tenant, "anon:"):
			return nil, fmt.Errorf("entry %d: %q is not a valid tenant (want [A-Za-z0-9._~-]{1,128})", n, tenant)
		case tenants[tenant]:
			return nil, fmt.Errorf("entry %d: tenant %q appears twice", n, tenant)
		case key == "":
			return nil, fmt.Errorf("entry %d (tenant %q): the key is empty", n, tenant)
		case !isToken68(key):
			return nil, fmt.Errorf("entry %d (tenant %q): the key must use only A-Z a-z 0-9 - . _ ~ + / (then optional '=' padding)", n, tenant)
		case keys[key] != "":
			return nil, fmt.Errorf("entry %d (tenant %q): the key is already given to tenant %q", n, tenant, keys[key])
		}
		tenants[tenant] = true
		keys[key] = tenant
		out = append(out, tenantKey{Tenant: tenant, Key: key})
	}
	return out, nil
}

// isToken68 matches RFC 7235 token68: 1*(ALPHA/DIGIT/-._~+/) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// bearerKeys is the demo interop.SubjectResolver: the API keys of -keys,
// plus the ones the conformance mint seam made. It keeps only SHA-256
// digests and compares every entry in constant time, so neither timing nor
// a memory dump of the table gives a key away.
type bearerKeys struct {
	mu      sync.RWMutex
	entries []keyEntry
	// configured is how many entries came from -keys; the rest are minted.
	configured int
}

type keyEntry struct {
	tenant    string
	principal string
	digest    [sha256.Size]byte
}

var _ interop.SubjectResolver = (*bearerKeys)(nil)

// maxMintedKeys bounds the keys the mint seam may add, so a caller looping
// on it cannot grow the table (and every request's compare) without end.
const maxMintedKeys = 1024

func newBearerKeys(keys []tenantKey) *bearerKeys {
	b := &bearerKeys{entries: make([]keyEntry, len(keys)), configured: len(keys)}
	for i, k := range keys {
		b.entries[i] = keyEntry{tenant: k.Tenant, principal: "key:" + k.Tenant, digest: sha256.Sum256([]byte(k.Key))}
	}
	return b
}

// Tenants lists the tenants that have a configured key, in -keys order.
func (b *bearerKeys) Tenants() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]string, b.configured)
	for i, e := range b.entries[:b.configured] {
		out[i] = e.tenant
	}
	return out
}

// Mint makes a fresh API key for a new principal of tenant, usable at once
// on every surface. The key is 32 random bytes (base64url); the principal
// ("key:<tenant>:minted-<random>") is drawn separately, so it says nothing
// about the key.
func (b *bearerKeys) Mint(tenant string) (string, error) {
	var raw [32]byte
	var id [8]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go ≥ 1.24).
	_, _ = rand.Read(id[:])
	key := base64.RawURLEncoding.EncodeToString(raw[:])
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.entries)-b.configured >= maxMintedKeys {
		return "", &apiError{Status: http.StatusForbidden, Code: codeForbidden,
			Message: "this host has minted as many credentials as it keeps"}
	}
	b.entries = append(b.entries, keyEntry{
		tenant:    tenant,
		principal: "key:" + tenant + ":minted-" + hex.EncodeToString(id[:]),
		digest:    sha256.Sum256([]byte(key)),
	})
	return key, nil
}

// ResolveSubject implements interop.SubjectResolver. A missing, malformed or
// unknown credential is interop.ErrUnauthenticated; the host serves no
// anonymous callers.
func (b *bearerKeys) ResolveSubject(r *http.Request) (interop.Subject, error) {
	token, ok := bearerToken(r.Header)
	if !ok {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	got := sha256.Sum256([]byte(token))
	b.mu.RLock()
	defer b.mu.RUnlock()
	match := -1
	for i := range b.entries {
		// No early exit: every request costs the same whichever key matches.
		if subtle.ConstantTimeCompare(got[:], b.entries[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	e := b.entries[match]
	return interop.Subject{Tenant: e.tenant, Principal: e.principal, Authenticated: true}, nil
}

// bearerToken extracts the credential of a single "Authorization: Bearer
// <token68>" header; the scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(h http.Header) (string, bool) {
	vs := h.Values("Authorization")
	if len(vs) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(vs[0], " ")
	token = strings.TrimLeft(token, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !isToken68(token) {
		return "", false
	}
	return token, true
}
