package negotiate

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// EventType is the run-event and host-event type of the audit record.
const EventType = "negotiation.decided"

// peerDigest returns the lowercase hex SHA-256 of the serialized origin of
// peer ("scheme://host[:port]", default port omitted, no path), or "" when
// peer has no usable origin. Only the digest ever enters a record, so a
// record never names its peer in clear (OpenWOP interop.md §The audit event).
func peerDigest(peer string) string {
	if peer == "" {
		return ""
	}
	origin, ok := Origin(peer)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(sum[:])
}

// Origin serializes the origin of an absolute http(s) URL the way the WHATWG
// URL standard does: lowercase scheme and host, the port only when it is not
// the scheme's default, no userinfo, path, query or fragment.
func Origin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return "", false
		}
		port = strconv.Itoa(n)
		if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
			port = ""
		}
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, true
	}
	return scheme + "://" + host, true
}

// appendRecord appends the negotiation.decided payload of d as JSON to dst.
// The payload is closed and content-free: protocol, outcome, at, and when
// known version, floor, requested, reason and peerDigest — nothing else
// about the peer. The encoder is hand-written because it runs on every
// request; values a Policy produces need no escaping, but a hand-built
// Decision is escaped all the same.
func (d Decision) appendRecord(dst []byte) []byte {
	dst = append(dst, `{"protocol":`...)
	dst = appendString(dst, string(d.Protocol))
	dst = append(dst, `,"outcome":`...)
	dst = appendString(dst, string(d.Outcome))
	dst = append(dst, `,"at":"`...)
	dst = d.At.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	dst = appendField(dst, "version", d.Version)
	dst = appendField(dst, "floor", d.Floor)
	dst = appendField(dst, "requested", d.Requested)
	dst = appendField(dst, "reason", string(d.Reason))
	dst = appendField(dst, "peerDigest", d.PeerDigest)
	return append(dst, '}')
}

// Record returns the negotiation.decided payload of d as a JSON document.
func (d Decision) Record() []byte { return d.appendRecord(make([]byte, 0, 256)) }

func appendField(dst []byte, name, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return appendString(dst, value)
}

// appendString appends s as a JSON string. Record values are ASCII by
// grammar; anything else can only come from a hand-built Decision, so
// non-ASCII bytes are replaced rather than validated as UTF-8.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		case c >= 0x7f:
			dst = append(dst, `\ufffd`...)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
