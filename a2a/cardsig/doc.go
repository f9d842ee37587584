// Package cardsig signs and verifies A2A agent cards (A2A 1.0 §8.4;
// OpenWOP interop map, a2a.card signatures[]).
//
// A card's signature is a JWS (RFC 7515) with a detached payload: the
// card's JSON without its signatures member and without default values,
// in RFC 8785 (JCS) canonical form ([Canonicalize]). It travels in the
// card's signatures[] as an AgentCardSignature: protected is the
// base64url protected header, signature the base64url signature, header
// an optional unprotected header.
//
// # Signing
//
// A [Signer] holds one private key — Ed25519 (EdDSA), ECDSA on P-256,
// P-384 or P-521 (ES256, ES384, ES512) or RSA (RS256), in memory or
// behind any crypto.Signer — and writes alg, kid, typ "JOSE" and, when
// configured, jku into the protected header (A2A 1.0 §8.4.2). [ParseSigner]
// reads a key from a JWK or a PEM file. [Signer.Sign] signs a card's JSON;
// [SignCard] returns a card's JSON with the signature added, ready to
// serve. The a2a package's Options.CardSigner signs every card its server
// serves.
//
// # Verifying
//
// A [Verifier] trusts a fixed set of public keys, found by kid. It never
// fetches one: a jku or a key embedded in a header is whatever the card's
// author chose, so it proves nothing. [Verifier.VerifyCard] succeeds when
// at least one signature verifies with a trusted key, and fails closed
// otherwise, with an [*Error] naming the [Reason]: no signatures, an
// unknown kid, alg none, an HMAC or an alg that does not fit the key
// (an HMAC keyed with the public key is the classic forgery, RFC 8725
// §2.1), malformed base64url or headers, a crit or b64 header (no JWS
// extension is understood here, RFC 7515 §4.1.11), or a signature that
// does not verify because the card changed.
//
// # What the signature covers
//
// Verification works on the card's bytes exactly as received, never on a
// re-encoding of a decoded struct: a decoder drops the members it does not
// know, so a re-encoded card would not show a member an attacker added,
// and the signature would vouch for a card nobody checked. Here every
// member is canonicalized as received, one no schema names included, so
// adding, changing or removing any member but signatures breaks the
// signature. The bytes must be one JSON object in UTF-8 without duplicate
// member names; jcs refuses anything else, where encoding/json would keep
// the last duplicate or replace invalid UTF-8, and so decode a card other
// than the one verified.
//
// Default values are omitted exactly as the reference SDKs (a2a-python,
// a2a-js) omit them, so their signatures verify here and ours there:
// empty strings, arrays and objects and nulls anywhere, and false in the
// schema's two plain proto3 booleans (see [Canonicalize]). A member with
// a default value is therefore absent to the signature, whatever its
// name: adding "iconUrl": "" to a signed card changes nothing it says. Where those
// SDKs go further the two differ on purpose: they drop members the A2A
// 1.0 schema does not name before signing, which this package keeps, so a
// card whose signature covers less than the card is refused. They also
// drop required members left empty that A2A 1.0 §8.4.1's example keeps
// (an empty skills or description); this package follows the SDKs, since
// a signature only matters when both sides compute the same payload.
// One more difference lies outside this package: a2a-go writes a security
// requirement's scopes as a bare array where the proto's JSON form (which
// a2a-js reads) wraps them in {"list": [...]}, so a2a-js reads a card from
// a2a-go with non-empty scopes as having none, and a signature over it
// made here does not verify there.
//
// A Verifier is the a2a/delegate CardVerifier: an admission that requires
// a signed card calls VerifyCard on the card's bytes before invoking the
// agent.
package cardsig
