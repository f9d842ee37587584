package isolation

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// op is an 18-character opaque segment used across the tables.
const op = "r-9f3cAB12cd34EF56"

var (
	op15  = strings.Repeat("o", 15)
	op16  = strings.Repeat("o", 16)
	op128 = strings.Repeat("o", 128)
	op129 = strings.Repeat("o", 129)
	t128  = strings.Repeat("t", 128)
	t129  = strings.Repeat("t", 129)
	dots  = strings.Repeat(".", 16)
)

func TestParseID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" means ErrMalformedID
	}{
		// The three accepted forms (OpenWOP identity.md §5; RFC 0198 §C.5).
		{"bound", "acme/" + op, "acme/" + op},
		{"projected", "acme~2F" + op, "acme/" + op},
		{"percent %2F", "acme%2F" + op, "acme/" + op},
		{"percent lowercase %2f", "acme%2f" + op, "acme/" + op},
		{"projected lowercase ~2f, as the suite codec reads it", "acme~2f" + op, "acme/" + op},
		{"projected over-escaped unreserved byte", "acme~2Fr~2D9f3cAB12cd34EF56", "acme/" + op},

		// anon: tenants (the ':' projects as ~3A; OpenWOP identity.md §5).
		{"anon bound", "anon:x/" + op, "anon:x/" + op},
		{"anon projected", "anon~3Ax~2F" + op, "anon:x/" + op},
		{"anon percent", "anon%3Ax%2F" + op, "anon:x/" + op},
		{"anon literal colon with projected slash", "anon:x~2F" + op, "anon:x/" + op},
		{"anon prefix twice", "anon:anon:x/" + op, ""},
		{"anon prefix only", "anon:/" + op, ""},
		{"anon prefix upper case", "ANON:x/" + op, ""},
		{"colon outside the anon prefix", "ac:me/" + op, ""},
		{"anon projected twice", "anon~3Aanon~3Ax~2F" + op, ""},

		// Legacy '~' (~ projects as ~7E and still resolves; OpenWOP identity.md §5).
		{"legacy tilde bound", "acme/ab~cd" + op, "acme/ab~cd" + op},
		{"legacy tilde projected", "acme~2Fab~7Ecd" + op, "acme/ab~cd" + op},
		{"legacy tilde percent-encoded", "acme%2Fab%7Ecd" + op, "acme/ab~cd" + op},
		{"legacy tilde literal in percent form", "acme%2Fab~cd" + op, "acme/ab~cd" + op},
		{"legacy tilde tenant bound", "ac~me/" + op, "ac~me/" + op},
		{"legacy tilde tenant projected", "ac~7Eme~2F" + op, "ac~me/" + op},
		{"projected tilde escape percent-encoded", "acme%7E2F" + op, "acme/" + op},

		// Double projection decodes to no '/' and is refused.
		{"double projected", "acme~7E2F" + op, ""},
		{"double projected anon", "anon~7E3Ax~7E2F" + op, ""},

		// Bad escapes.
		{"tilde alone", "~", ""},
		{"truncated tilde escape", "acme~2", ""},
		{"tilde escape at end", "acme~2F" + op + "~", ""},
		{"tilde escape one digit at end", "acme~2F" + op + "~4", ""},
		{"non-hex tilde escape", "acme~ZZ" + op, ""},
		{"half-hex tilde escape", "acme~2G" + op, ""},
		{"percent alone", "%", ""},
		{"truncated percent escape", "acme%2", ""},
		{"non-hex percent escape", "acme%ZZ" + op, ""},
		{"percent escape at end", "acme%2F" + op + "%", ""},
		{"percent-encoded percent", "acme%252F" + op, ""},

		// Segment lengths (OpenWOP identity.md §5).
		{"opaque 15", "acme/" + op15, ""},
		{"opaque 16", "acme/" + op16, "acme/" + op16},
		{"opaque 128", "acme/" + op128, "acme/" + op128},
		{"opaque 129", "acme/" + op129, ""},
		{"opaque 15 projected", "acme~2F" + op15, ""},
		{"opaque 129 projected", "acme~2F" + op129, ""},
		{"tenant 128", t128 + "/" + op, t128 + "/" + op},
		{"tenant 129", t129 + "/" + op, ""},
		{"anon tenant 128", "anon:" + t128 + "/" + op, "anon:" + t128 + "/" + op},
		{"anon tenant 129", "anon:" + t129 + "/" + op, ""},
		{"tenant 129 projected", t129 + "~2F" + op, ""},

		// Empty segments.
		{"empty", "", ""},
		{"slash only", "/", ""},
		{"projected slash only", "~2F", ""},
		{"percent slash only", "%2F", ""},
		{"empty opaque", "acme/", ""},
		{"empty opaque projected", "acme~2F", ""},
		{"empty tenant", "/" + op, ""},
		{"empty tenant projected", "~2F" + op, ""},
		{"empty tenant percent", "%2F" + op, ""},

		// Extra slashes.
		{"double slash", "acme//" + op, ""},
		{"double slash projected", "acme~2F~2F" + op, ""},
		{"double slash percent", "acme%2F%2F" + op, ""},
		{"trailing slash", "acme/" + op + "/", ""},
		{"trailing slash projected", "acme~2F" + op + "~2F", ""},
		{"trailing slash percent", "acme%2F" + op + "%2F", ""},
		{"leading slash", "/acme/" + op, ""},
		{"three segments", "acme/ws/" + op, ""},

		// Bytes outside the grammar.
		{"unicode tenant", "acmé/" + op, ""},
		{"unicode opaque", "acme/" + op + "é", ""},
		{"unicode projected", "acm~C3~A9~2F" + op, ""},
		{"unicode percent", "acm%C3%A9%2F" + op, ""},
		{"space in tenant", "ac me/" + op, ""},
		{"leading space", " acme/" + op, ""},
		{"trailing space", "acme/" + op + " ", ""},
		{"space projected", "ac~20me~2F" + op, ""},
		{"space percent", "ac%20me%2F" + op, ""},
		{"plus", "ac+me/" + op, ""},
		{"NUL projected", "acme~00~2F" + op, ""},
		{"NUL percent", "acme%00%2F" + op, ""},
		{"newline", "acme/" + op + "\n", ""},
		{"query", "acme/" + op + "?x=1", ""},
		{"backslash", `acme\` + op, ""},

		// Path traversal attempts. Dots are in the grammar, so a dot-only
		// tenant segment is a well-formed id (the read gate refuses it as
		// not the caller's); anything that needs more segments is refused.
		{"dotdot percent", "..%2F..", ""},
		{"dotdot projected", "..~2F..", ""},
		{"dotdot bound", "../..", ""},
		{"dotdot climbing", "..%2F..%2F" + op, ""},
		{"dotdot climbing projected", "..~2F..~2F" + op, ""},
		{"dot tenant dot opaque", "..%2F" + dots, "../" + dots},
		{"percent-encoded dots", "%2E%2E%2F" + op, "../" + op},
		{"dotdot then id", "../acme/" + op, ""},

		// A bare opaque segment is not a bound id (see ResolveParam).
		{"bare", op, ""},
		{"bare 26", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseID(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrMalformedID) || got != "" {
					t.Fatalf("ParseID(%q) = %q, %v; want \"\", ErrMalformedID", tc.in, got, err)
				}
				if boundRE.MatchString(tc.in) {
					t.Fatalf("test case %q matches the bound grammar but is expected malformed", tc.in)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if !boundRE.MatchString(got) {
				t.Fatalf("accepted %q does not match the OpenWOP identity.md §5 grammar", got)
			}
			if back, err := ParseID(Project(got)); err != nil || back != got {
				t.Fatalf("ParseID(Project(%q)) = %q, %v", got, back, err)
			}
		})
	}
}

// TestValidatorsMatchGrammar checks the hand-written validators against the
// OpenWOP identity.md §5 regular expressions on every string of the ParseID table and more.
func TestValidatorsMatchGrammar(t *testing.T) {
	inputs := []string{
		"", "a", "~", ".", "anon:", "anon:a", "anon:anon:a", "a:b", t128, t129,
		"anon:" + t128, "anon:" + t129, op15, op16, op128, op129, "ab~cd" + op,
		"a/" + op16, "a/" + op15, "a/" + op129, "anon:a/" + op, "a//" + op,
		"é" + op, op + "é", "a b" + op, dots, "-_.~" + op,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		inputs = append(inputs, randomString(r, "aZ09._~-/:%é é", 0, 140))
	}
	for _, in := range inputs {
		if got, want := ValidBound(in), boundRE.MatchString(in); got != want {
			t.Errorf("ValidBound(%q) = %t, regexp %t", in, got, want)
		}
		if got, want := ValidOpaque(in), opaqueRE.MatchString(in); got != want {
			t.Errorf("ValidOpaque(%q) = %t, regexp %t", in, got, want)
		}
		if got, want := ValidTenant(in), tenantRE.MatchString(in); got != want {
			t.Errorf("ValidTenant(%q) = %t, regexp %t", in, got, want)
		}
	}
}

// TestProjectRoundTrip is the property ParseID(Project(x)) == x over random
// valid bound ids, including anon: tenants and legacy '~'. The percent form
// a generic URL encoder produces and the bound form round-trip as well.
func TestProjectRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-"
	for range 5000 {
		tenant := randomString(r, alphabet, 1, 128)
		if r.IntN(4) == 0 {
			tenant = "anon:" + tenant
		}
		id := tenant + "/" + randomString(r, alphabet, 16, 128)
		if !ValidBound(id) {
			t.Fatalf("generator produced invalid %q", id)
		}
		p := Project(id)
		if !projectedRE.MatchString(p) || strings.Contains(p, "/") {
			t.Fatalf("Project(%q) = %q is not one canonical path segment", id, p)
		}
		for _, form := range []string{id, p, url.PathEscape(id), url.PathEscape(p)} {
			got, err := ParseID(form)
			if err != nil || got != id {
				t.Fatalf("ParseID(%q) = %q, %v; want %q", form, got, err, id)
			}
		}
		if u, err := unproject(p); err != nil || u != id {
			t.Fatalf("unproject(%q) = %q, %v", p, u, err)
		}
	}
}

func TestProjectEscapesEveryByteOutsideTheSet(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{byte(c)})
		p := Project(s)
		passthrough := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if passthrough {
			if p != s {
				t.Errorf("Project(%q) = %q, want unchanged", s, p)
			}
			continue
		}
		want := "~" + strings.ToUpper(hex2(byte(c)))
		if p != want {
			t.Errorf("Project(byte %#x) = %q, want %q", c, p, want)
		}
		if u, err := unproject(p); err != nil || u != s {
			t.Errorf("unproject(%q) = %q, %v; want %q", p, u, err, s)
		}
	}
}

func TestProjectGolden(t *testing.T) {
	ids := []string{
		"acme/r-9f3cAB12cd34EF56",
		"acme/ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"anon:visitor-7/ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"acme/legacy~opaque~0001",
		"le~gacy/ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"t.e_n-a.n_t/o.p_a-q.u_e-0123456789",
		"../................",
		"0/0123456789abcdef",
	}
	var b strings.Builder
	for _, id := range ids {
		if !ValidBound(id) {
			t.Fatalf("golden input %q is not a bound id", id)
		}
		b.WriteString(id + "\t" + Project(id) + "\n")
	}
	golden(t, "projection.golden", []byte(b.String()))
}

func TestUnproject(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"plain", "plain", true},
		{"a~2Fb", "a/b", true},
		{"a~2fb", "a/b", true},
		{"~7E", "~", true},
		{"~7E7E", "~7E", true},
		{"~41", "A", true},
		{"~00~FF", "\x00\xff", true},
		{"~", "", false},
		{"~2", "", false},
		{"a~", "", false},
		{"a~G1", "", false},
		{"a~1G", "", false},
		{"~~41", "", false},
		{"a~2Fb~", "", false},
	}
	for _, tc := range tests {
		got, err := unproject(tc.in)
		if tc.ok {
			if err != nil || got != tc.want {
				t.Errorf("unproject(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		if !errors.Is(err, ErrMalformedID) || got != "" {
			t.Errorf("unproject(%q) = %q, %v; want ErrMalformedID", tc.in, got, err)
		}
	}
}

func TestSplitAndTenantOf(t *testing.T) {
	tests := []struct {
		id, tenant, opaque string
	}{
		{"acme/" + op, "acme", op},
		{"anon:x/" + op, "anon:x", op},
		{"ac~me/ab~" + op, "ac~me", "ab~" + op},
		{"acme~2F" + op, "", ""},
		{"acme/" + op15, "", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		tn, o, err := Split(tc.id)
		if tc.tenant == "" {
			if !errors.Is(err, ErrMalformedID) {
				t.Errorf("Split(%q) err = %v, want ErrMalformedID", tc.id, err)
			}
		} else if err != nil || tn != tc.tenant || o != tc.opaque {
			t.Errorf("Split(%q) = %q, %q, %v", tc.id, tn, o, err)
		}
		if got := TenantOf(tc.id); got != tc.tenant {
			t.Errorf("TenantOf(%q) = %q, want %q", tc.id, got, tc.tenant)
		}
	}
}

// TestNewOpaque checks minted segments (OpenWOP identity.md §5; interop.md
// §MCP tasks and cancellation): the grammar,
// never '~', at least 128 bits (base32: 5 bits a character), and no repeats.
func TestNewOpaque(t *testing.T) {
	seen := make(map[string]bool)
	for range 2000 {
		o := NewOpaque()
		if !opaqueRE.MatchString(o) || !ValidOpaque(o) {
			t.Fatalf("minted %q does not match the OpenWOP identity.md §5 opaque grammar", o)
		}
		if strings.Contains(o, "~") {
			t.Fatalf("minted %q contains '~'", o)
		}
		if len(o) < 22 || len(o)*5 < 128 {
			t.Fatalf("minted %q has %d characters, fewer than 128 bits", o, len(o))
		}
		if strings.Trim(o, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
			t.Fatalf("minted %q leaves the base32 alphabet", o)
		}
		if Project(o) != o {
			t.Fatalf("minted %q does not project to itself", o)
		}
		if seen[o] {
			t.Fatalf("minted %q twice", o)
		}
		seen[o] = true
	}
}

func TestNewID(t *testing.T) {
	for _, tenant := range []string{"acme", "anon:visitor", t128, "a.b_c-d"} {
		id, err := NewID(tenant)
		if err != nil {
			t.Fatalf("NewID(%q): %v", tenant, err)
		}
		if !boundRE.MatchString(id) || TenantOf(id) != tenant || strings.Contains(id, "~") {
			t.Fatalf("NewID(%q) = %q", tenant, id)
		}
	}
	for _, tenant := range []string{"", "anon:", "a/b", "a b", t129, "é", "ac~me", "anon:~x"} {
		id, err := NewID(tenant)
		if !errors.Is(err, ErrMalformedID) || id != "" {
			t.Errorf("NewID(%q) = %q, %v; want ErrMalformedID", tenant, id, err)
		}
	}
}

func randomString(r *rand.Rand, alphabet string, minLen, maxLen int) string {
	n := minLen + r.IntN(maxLen-minLen+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xF]})
}
