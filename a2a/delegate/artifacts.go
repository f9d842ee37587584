package delegate

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"hash"
	"maps"
	"math"
	"mime"
	"slices"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// MetadataSHA256 is the artifact metadata key of the digest convention the
// library checks (admission-boundaries §18.4.2: "digest when the contract
// gives one"): Artifact.metadata.sha256 is the lowercase hex SHA-256 of the
// artifact's content — the concatenated bytes of its parts in order, a
// text part as its UTF-8 bytes and a raw part as its decoded bytes. A data
// or url part has no byte form both sides share, so an artifact that
// carries a digest and such a part is refused as unverifiable; so is a
// digest that is not 64 hex digits. An artifact without the key is
// admitted without a digest check.
const MetadataSHA256 = "sha256"

// artifactSet collects a task's artifacts as the peer sends them — whole,
// in a task snapshot, or in chunks — and admits them against the
// admission's limits before the host sees any (admission-boundaries
// §18.4.2). Count, size and media type are checked as content arrives, so
// nothing over the limits is kept; completeness and digests when the task
// completes. The first refusal sticks.
type artifactSet struct {
	maxCount int
	maxBytes int64
	// media are the admitted media types, normalised; nil admits any.
	media []string
	// taskID is the task the artifacts must belong to.
	taskID  wire.TaskID
	items   []*pendingArtifact
	refused error
}

// pendingArtifact is one artifact as assembled so far.
type pendingArtifact struct {
	art  *wire.Artifact
	size int64
	// chunked: a chunk was appended to it (TaskArtifactUpdateEvent.append).
	chunked bool
	// closed: its last chunk arrived (lastChunk).
	closed bool
}

func newArtifactSet(l Limits) artifactSet {
	s := artifactSet{maxCount: l.MaxArtifacts, maxBytes: l.MaxArtifactBytes}
	if len(l.MediaTypes) > 0 {
		// Non-nil even when no entry parses: a list the host set admits
		// only what it names.
		s.media = make([]string, 0, len(l.MediaTypes))
		for _, m := range l.MediaTypes {
			if n, ok := normalMediaType(m); ok {
				s.media = append(s.media, n)
			}
		}
	}
	return s
}

func (s *artifactSet) len() int { return len(s.items) }

// refuse records the set's first refusal and returns it.
func (s *artifactSet) refuse(r ArtifactRefusal, id wire.ArtifactID, part int) error {
	if s.refused == nil {
		s.refused = &ArtifactError{Refusal: r, ArtifactID: id, Part: part}
	}
	return s.refused
}

// snapshot replaces the set with a task's artifacts as a Task carries
// them (A2A 1.0 §4.1.1: the task's current artifacts).
func (s *artifactSet) snapshot(arts []*wire.Artifact) error {
	if s.refused != nil {
		return s.refused
	}
	if len(arts) > s.maxCount {
		return s.refuse(RefusalCount, "", -1)
	}
	items := make([]*pendingArtifact, 0, len(arts))
	for _, a := range arts {
		if a == nil {
			return s.refuse(RefusalIncomplete, "", -1)
		}
		p := &pendingArtifact{art: cloneArtifact(a)}
		if err := s.addParts(p, a.Parts, 0); err != nil {
			return err
		}
		items = append(items, p)
	}
	s.items = items
	return nil
}

// chunk applies one TaskArtifactUpdateEvent (A2A 1.0 §4.2.2): without
// append it starts (or replaces) the artifact of its id; with append it
// adds parts to one that was started and not closed. lastChunk closes it.
func (s *artifactSet) chunk(ev *wire.TaskArtifactUpdateEvent) error {
	if s.refused != nil {
		return s.refused
	}
	a := ev.Artifact
	if a == nil {
		return s.refuse(RefusalIncomplete, "", -1)
	}
	i := slices.IndexFunc(s.items, func(p *pendingArtifact) bool { return p.art.ID == a.ID })
	if !ev.Append {
		p := &pendingArtifact{art: cloneArtifact(a), closed: ev.LastChunk}
		if err := s.addParts(p, a.Parts, 0); err != nil {
			return err
		}
		if i >= 0 {
			s.items[i] = p
			return nil
		}
		if len(s.items) >= s.maxCount {
			return s.refuse(RefusalCount, a.ID, -1)
		}
		s.items = append(s.items, p)
		return nil
	}
	if i < 0 || s.items[i].closed {
		return s.refuse(RefusalIncomplete, a.ID, -1)
	}
	p := s.items[i]
	if err := s.addParts(p, a.Parts, len(p.art.Parts)); err != nil {
		return err
	}
	p.art.Parts = append(p.art.Parts, a.Parts...)
	if len(a.Metadata) > 0 {
		if p.art.Metadata == nil {
			p.art.Metadata = make(map[string]any, len(a.Metadata))
		}
		maps.Copy(p.art.Metadata, a.Metadata)
	}
	for _, e := range a.Extensions {
		if !slices.Contains(p.art.Extensions, e) {
			p.art.Extensions = append(p.art.Extensions, e)
		}
	}
	p.chunked, p.closed = true, ev.LastChunk
	return nil
}

// reply admits the parts of a direct message answer as one artifact.
func (s *artifactSet) reply(m *wire.Message) error {
	return s.addParts(&pendingArtifact{art: &wire.Artifact{}}, m.Parts, 0)
}

// admitted is the set's refusal, if any.
func (s *artifactSet) admitted() error { return s.refused }

// admit returns the artifacts of a completed task once every one is
// complete and matches its digest.
func (s *artifactSet) admit() ([]*wire.Artifact, error) {
	if s.refused != nil {
		return nil, s.refused
	}
	if len(s.items) == 0 {
		return nil, nil
	}
	out := make([]*wire.Artifact, 0, len(s.items))
	for _, p := range s.items {
		if p.chunked && !p.closed {
			return nil, s.refuse(RefusalIncomplete, p.art.ID, -1)
		}
		if part, ok := digestMatches(p.art); !ok {
			return nil, s.refuse(RefusalDigest, p.art.ID, part)
		}
		out = append(out, p.art)
	}
	return out, nil
}

// addParts checks parts about to join p (the first at index offset): each
// is present, of an admitted media type, and p stays within the size cap.
func (s *artifactSet) addParts(p *pendingArtifact, parts []*wire.Part, offset int) error {
	for i, part := range parts {
		if part == nil || part.Content == nil {
			return s.refuse(RefusalIncomplete, p.art.ID, offset+i)
		}
		if s.media != nil {
			n, ok := normalMediaType(mediaTypeOf(part))
			if !ok || !slices.Contains(s.media, n) {
				return s.refuse(RefusalMediaType, p.art.ID, offset+i)
			}
		}
		p.size += partSize(part)
		if p.size > s.maxBytes || p.size < 0 {
			return s.refuse(RefusalSize, p.art.ID, offset+i)
		}
	}
	return nil
}

// mediaTypeOf is a part's declared media type, or the one its kind implies:
// text/plain for text, application/json for data, and
// application/octet-stream for raw bytes and urls.
func mediaTypeOf(p *wire.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch p.Content.(type) {
	case wire.Text:
		return "text/plain"
	case wire.Data:
		return "application/json"
	}
	return "application/octet-stream"
}

// normalMediaType is s without parameters, lowercased (RFC 2045 §5.1).
func normalMediaType(s string) (string, bool) {
	mt, _, err := mime.ParseMediaType(s)
	return mt, err == nil
}

// partSize is a part's decoded size: the text's bytes, the raw bytes, the
// JSON encoding of data, and for a url (never fetched here) the url itself.
func partSize(p *wire.Part) int64 {
	switch c := p.Content.(type) {
	case wire.Text:
		return int64(len(c))
	case wire.Raw:
		return int64(len(c))
	case wire.URL:
		return int64(len(c))
	case wire.Data:
		b, err := json.Marshal(c.Value)
		if err != nil {
			return math.MaxInt64
		}
		return int64(len(b))
	}
	return 0
}

// digestMatches checks a's MetadataSHA256 digest, when it has one. part is
// the index of a part that cannot be digested, or -1.
func digestMatches(a *wire.Artifact) (part int, ok bool) {
	v, present := a.Metadata[MetadataSHA256]
	if !present {
		return -1, true
	}
	want, isString := v.(string)
	sum, err := hex.DecodeString(want)
	if !isString || err != nil || len(sum) != sha256.Size {
		return -1, false
	}
	var h hash.Hash = sha256.New()
	for i, p := range a.Parts {
		switch c := p.Content.(type) {
		case wire.Text:
			h.Write([]byte(c))
		case wire.Raw:
			h.Write(c)
		default:
			return i, false
		}
	}
	return -1, subtle.ConstantTimeCompare(h.Sum(nil), sum) == 1
}

// cloneArtifact copies what assembling an artifact changes (its part list,
// metadata and extensions), so chunks never write into the peer's event.
func cloneArtifact(a *wire.Artifact) *wire.Artifact {
	c := *a
	c.Parts = slices.Clone(a.Parts)
	c.Metadata = maps.Clone(a.Metadata)
	c.Extensions = slices.Clone(a.Extensions)
	return &c
}
