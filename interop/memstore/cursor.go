package memstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"
)

// A ListRuns cursor is base64url (no padding) of
//
//	version(1) | statusAt unix nanos (8, big endian) | run id | mac(16)
//
// where mac is HMAC-SHA256 over a domain label, the scope (tenant,
// workspace, filters) and the bytes before it, truncated to 16 bytes. The
// key is random per Store, so a cursor is only valid for the store that
// issued it, for the same tenant/workspace and the same filters. Decoding
// accepts exactly the canonical encoding of a signed cursor and nothing
// else.
const (
	cursorVersion  byte = 1
	cursorMACLen        = 16
	cursorHeadLen       = 1 + 8
	maxCursorToken      = 1024 // far above any cursor this store issues
	cursorDomain        = "wopinterop/memstore/list-cursor\x00"
)

// cursorScope is what a cursor is bound to.
type cursorScope struct {
	tenant string
	filter *listFilter
}

// appendScope writes the scope with length prefixes, so that no two scopes
// share an encoding.
func appendScope(b []byte, sc cursorScope) []byte {
	f := sc.filter
	for _, s := range [...]string{sc.tenant, f.workspace, f.contextID, f.workflowID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint16(b, f.statuses)
	if f.hasAfter {
		b = append(b, 1)
		b = binary.BigEndian.AppendUint64(b, uint64(f.statusAfter))
	} else {
		b = append(b, 0)
	}
	return b
}

// cursorSigner issues and checks cursors. Its buffers are pooled so that a
// ListRuns page costs one allocation for its cursor string.
type cursorSigner struct {
	enc  *base64.Encoding
	pool sync.Pool // *cursorBuffers
}

type cursorBuffers struct {
	mac     hash.Hash
	msg     []byte // MAC input
	sum     []byte // MAC output
	payload []byte // token bytes before base64
	text    []byte // token text
}

func newCursorSigner(key []byte) *cursorSigner {
	c := &cursorSigner{enc: base64.RawURLEncoding.Strict()}
	c.pool.New = func() any { return &cursorBuffers{mac: hmac.New(sha256.New, key)} }
	return c
}

func (c *cursorSigner) buffers() *cursorBuffers { return c.pool.Get().(*cursorBuffers) }

// sign returns the truncated MAC of payload in scope. The result aliases b
// and is valid until b is reused.
func (b *cursorBuffers) sign(sc cursorScope, payload []byte) []byte {
	m := append(b.msg[:0], cursorDomain...)
	m = appendScope(m, sc)
	m = append(m, payload...)
	b.msg = m
	b.mac.Reset()
	b.mac.Write(m)
	b.sum = b.mac.Sum(b.sum[:0])
	return b.sum[:cursorMACLen]
}

// encode issues the cursor for position k in scope.
func (c *cursorSigner) encode(sc cursorScope, k listKey) string {
	b := c.buffers()
	defer c.pool.Put(b)
	p := append(b.payload[:0], cursorVersion)
	p = binary.BigEndian.AppendUint64(p, uint64(k.at))
	p = append(p, k.id...)
	mac := b.sign(sc, p)
	p = append(p, mac...)
	b.payload = p
	b.text = c.enc.AppendEncode(b.text[:0], p)
	return string(b.text)
}

// decode returns the position of a cursor this signer issued for scope.
func (c *cursorSigner) decode(sc cursorScope, token string) (listKey, bool) {
	if len(token) == 0 || len(token) > maxCursorToken {
		return listKey{}, false
	}
	b := c.buffers()
	defer c.pool.Put(b)
	b.text = append(b.text[:0], token...)
	raw, err := c.enc.AppendDecode(b.payload[:0], b.text)
	if raw != nil {
		b.payload = raw
	}
	// The decoder skips '\r' and '\n'; the length check rejects any token
	// that is not exactly the canonical encoding of its bytes.
	if err != nil || c.enc.EncodedLen(len(raw)) != len(token) ||
		len(raw) < cursorHeadLen+cursorMACLen || raw[0] != cursorVersion {
		return listKey{}, false
	}
	payload, mac := raw[:len(raw)-cursorMACLen], raw[len(raw)-cursorMACLen:]
	if !hmac.Equal(mac, b.sign(sc, payload)) {
		return listKey{}, false
	}
	return listKey{
		at: int64(binary.BigEndian.Uint64(payload[1:cursorHeadLen])),
		id: string(payload[cursorHeadLen:]),
	}, true
}
