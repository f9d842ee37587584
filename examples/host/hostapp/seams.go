package hostapp

import (
	"net/http"

	"github.com/wopinterop/wopinterop/interop"
)

// The conformance seams (-conformance-seams): test-only endpoints the
// OpenWOP conformance suite drives, under the seams profile it reads from
// discovery (conformance.seamsProfile, RFC 0168 §C.1). Off, none of them
// is routed: the paths answer 404 not_found like any unknown route.
const (
	seamsProfile = "openwop-conformance-seams-v2"
	// mintPath mints a fresh Subject of the caller's tenant: a new
	// principal with an API key of its own, so a scenario starts from a
	// Subject that holds nothing yet (e.g. no credential for a connector).
	mintPath = "/conformance/seams/sample/auth/credential/mint"
	// mintLaneAPIKey is the one lane served: the credential is a bearer
	// API key.
	mintLaneAPIKey = "api-key"
)

// credentialMinter makes a fresh API key for a new principal of tenant.
type credentialMinter interface {
	Mint(tenant string) (string, error)
}

// mintedView answers the mint seam.
type mintedView struct {
	Credential string `json:"credential"`
}

// mintCredential serves POST mintPath {"lane":"api-key"}: a new principal
// of the caller's tenant and its bearer key. Only an authenticated caller
// reaches it, and only for its own tenant: the key is worth what the
// caller's own key is worth, under another name. It is still test-only —
// see the -conformance-seams help.
func (s *server) mintCredential(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	members, err := s.readJSONBody(w, r, false, "lane")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	lane, err := stringMember(members, "lane")
	if err == nil && lane != mintLaneAPIKey {
		err = invalid("lane", `must be "`+mintLaneAPIKey+`"`)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	key, err := s.minter.Mint(sub.Tenant)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the body is a credential
	s.respond(w, r, http.StatusOK, mintedView{Credential: key})
}
