//go:build knownbugs

// Known defects reported upstream of this package, kept out of the default
// test run (go test -tags knownbugs ./examples/host runs them). Each test
// fails until its defect is fixed; then drop the build tag.

package hostapp

import (
	"encoding/json"
	"net/http"
	"testing"
)

// A2A 1.0 defines SecurityRequirement.schemes as map<string, StringList>,
// and ProtoJSON writes a StringList as {"list":[...]}. The card's
// securityRequirements come from a2a-go v2.4.0's SecurityRequirementsOptions,
// which writes the scopes as a bare array: {"schemes":{"bearer":[]}}.
// @a2a-js/sdk reads either; a strict ProtoJSON peer refuses the card. Note
// the catch: a2a-go v2.4.0's own card parser refuses the ProtoJSON form
// (a2a-go issue 430), so fixing the encoding breaks a2a-go peers until they
// upgrade.
func TestCardSecurityRequirementsAreProtoJSON(t *testing.T) {
	h := newTestHost(t)
	r := h.do(req{Method: "GET", Path: a2aCardPath})
	wantStatus(t, r, http.StatusOK)
	var card struct {
		SecurityRequirements []struct {
			Schemes map[string]json.RawMessage `json:"schemes"`
		} `json:"securityRequirements"`
	}
	if err := json.Unmarshal(r.Body, &card); err != nil {
		t.Fatal(err)
	}
	for _, req := range card.SecurityRequirements {
		for name, scopes := range req.Schemes {
			var list struct {
				List []string `json:"list"`
			}
			if err := json.Unmarshal(scopes, &list); err != nil {
				t.Errorf("scheme %q scopes %s are not a ProtoJSON StringList: %v", name, scopes, err)
			}
		}
	}
}
