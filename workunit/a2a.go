package workunit

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// ExtensionURI identifies the extension on both protocols: an A2A agent
// declares it in capabilities.extensions[] of its card and a client
// activates it with the A2A-Extensions service parameter (A2A 1.0 §3.2.6;
// A2A extensions §Extension Activation); a unit's part names it in its
// metadata. It lies under the module's own namespace and is an identifier,
// not a location: this package's documentation is its specification. A
// breaking change of the encoding gets a new URI (A2A extensions
// §Versioning).
const ExtensionURI = "https://github.com/wopinterop/wopinterop/workunit/v1"

// MediaType is the media type of the part that carries a unit.
const MediaType = "application/json"

// digestMember is the member of the envelope (A2A part metadata, MCP
// argument) that holds the unit's digest.
const digestMember = "sha256"

// AgentExtension is the declaration of the extension for an agent card's
// capabilities.extensions[] (a2a.Options.Extensions for this module's
// server). It is not required: a client that does not activate it is
// served as before and its messages are never read as units.
func AgentExtension() wire.AgentExtension {
	return wire.AgentExtension{
		URI:         ExtensionURI,
		Description: "Carries a structured work unit as RFC 8785 canonical JSON with its SHA-256 digest; the receiver recomputes the digest and refuses any difference.",
	}
}

// Declared reports whether card declares the extension, so that a client
// may activate it (A2A extensions §Extension Activation: an agent ignores
// an extension it does not support).
func Declared(card *wire.AgentCard) bool {
	if card == nil {
		return false
	}
	return slices.ContainsFunc(card.Capabilities.Extensions, func(e wire.AgentExtension) bool { return e.URI == ExtensionURI })
}

// Activate lists the extension in m.Extensions (A2A 1.0 Message.extensions:
// the extensions that contributed to the message), once. The request that
// carries m must activate it too: with a2a-go,
// a2aext.NewActivator(ExtensionURI) as a client interceptor, which
// requests it only from an agent whose card declares it; otherwise
// [ActivateHeader].
func Activate(m *wire.Message) {
	if !slices.Contains(m.Extensions, ExtensionURI) {
		m.Extensions = append(m.Extensions, ExtensionURI)
	}
}

// ActivateHeader requests the extension in h, the headers of an HTTP
// request to an A2A interface: the A2A-Extensions service parameter (A2A
// 1.0 §3.2.6), added to what h already requests.
func ActivateHeader(h http.Header) {
	if !Activated(h.Values(wire.SvcParamExtensions)) {
		h.Add(wire.SvcParamExtensions, ExtensionURI)
	}
}

// Activated reports whether values — the A2A-Extensions values of a
// request or response, or the activated extensions a server reports —
// name the extension. Each value is a comma-separated list of URIs (A2A
// 1.0 §3.2.6); URIs compare exactly, as service parameter values are case
// sensitive.
func Activated(values []string) bool {
	for _, v := range values {
		for uri := range strings.SplitSeq(v, ",") {
			if strings.Trim(uri, " \t") == ExtensionURI {
				return true
			}
		}
	}
	return false
}

// A2APart is the part that carries the unit on A2A: a raw part holding
// the canonical bytes exactly, media type application/json, the digest in
// its metadata under the extension URI ({"sha256": digest}). Raw bytes
// travel base64-encoded and come back byte for byte through any JSON
// encoder; a data part would not (see the package documentation).
func (e Envelope) A2APart() *wire.Part {
	return &wire.Part{
		Content:   wire.Raw(e.Canonical()),
		MediaType: MediaType,
		Metadata:  map[string]any{ExtensionURI: map[string]any{digestMember: e.digest}},
	}
}

// InteropPart is [Envelope.A2APart] as a host part, for a host that
// returns a unit — a result unit, say — in an artifact or a message of
// its run: this module's A2A server projects it onto exactly that wire
// part.
func (e Envelope) InteropPart() interop.Part {
	return interop.Part{
		Kind:      interop.PartRaw,
		Raw:       e.Canonical(),
		MediaType: MediaType,
		Metadata:  map[string]any{ExtensionURI: map[string]any{digestMember: e.digest}},
	}
}

// FromA2A reads the unit that parts carry — a message's or an artifact's
// — and opens it ([Open]). activated are the extensions active for the
// exchange, in any form [Activated] reads: on the agent side the
// request's A2A-Extensions values (with this module's server,
// interop.Message.ActivatedExtensions, and [FromMessage] reads them); on
// the client side the extension when the client requested it from an
// agent whose card declares it. It fails closed: the extension not
// activated, no part or more than one naming the extension in its
// metadata, that part not a raw application/json part, its metadata not
// exactly {"sha256": digest}, and every refusal of Open.
func FromA2A(parts []*wire.Part, activated []string) (Envelope, error) {
	if !Activated(activated) {
		return Envelope{}, fmt.Errorf("%w: the exchange did not activate %s", ErrNotActivated, ExtensionURI)
	}
	var carrier *wire.Part
	for _, p := range parts {
		if p == nil {
			continue
		}
		if _, ok := p.Metadata[ExtensionURI]; !ok {
			continue
		}
		if carrier != nil {
			return Envelope{}, fmt.Errorf("%w: more than one part carries a unit", ErrMalformed)
		}
		carrier = p
	}
	if carrier == nil {
		return Envelope{}, fmt.Errorf("%w: no part carries a unit", ErrNoUnit)
	}
	raw, ok := carrier.Content.(wire.Raw)
	if !ok {
		return Envelope{}, fmt.Errorf("%w: the unit's part is not a raw part", ErrMalformed)
	}
	return openPart(raw, carrier.MediaType, carrier.Metadata)
}

// FromMessage is [FromA2A] for a message as this module's A2A server hands
// it to the host (interop.CreateRunRequest.Message,
// interop.ResolveRequest.Message, InputDeliverer): activation is the
// message's ActivatedExtensions, what the request's A2A-Extensions
// activated among the extensions the server declares.
func FromMessage(m *interop.Message) (Envelope, error) {
	if m == nil || !Activated(m.ActivatedExtensions) {
		return Envelope{}, fmt.Errorf("%w: the exchange did not activate %s", ErrNotActivated, ExtensionURI)
	}
	var carrier *interop.Part
	for i := range m.Parts {
		p := &m.Parts[i]
		if _, ok := p.Metadata[ExtensionURI]; !ok {
			continue
		}
		if carrier != nil {
			return Envelope{}, fmt.Errorf("%w: more than one part carries a unit", ErrMalformed)
		}
		carrier = p
	}
	if carrier == nil {
		return Envelope{}, fmt.Errorf("%w: no part carries a unit", ErrNoUnit)
	}
	if carrier.Kind != interop.PartRaw {
		return Envelope{}, fmt.Errorf("%w: the unit's part is not a raw part", ErrMalformed)
	}
	return openPart(carrier.Raw, carrier.MediaType, carrier.Metadata)
}

// openPart checks the carrier part's media type and metadata and opens
// its bytes.
func openPart(raw []byte, mediaType string, metadata map[string]any) (Envelope, error) {
	if !strings.EqualFold(mediaType, MediaType) {
		return Envelope{}, fmt.Errorf("%w: the unit's part is not %s", ErrMalformed, MediaType)
	}
	meta, ok := metadata[ExtensionURI].(map[string]any)
	if !ok || len(meta) != 1 {
		return Envelope{}, fmt.Errorf("%w: the unit's part metadata is not {%q: digest}", ErrMalformed, digestMember)
	}
	digest, ok := meta[digestMember].(string)
	if !ok {
		return Envelope{}, fmt.Errorf("%w: the unit's part metadata is not {%q: digest}", ErrMalformed, digestMember)
	}
	return Open(raw, digest)
}
