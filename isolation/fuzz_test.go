package isolation

import (
	"errors"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func addIDSeeds(f *testing.F) {
	for _, s := range []string{
		"acme/" + op, "acme~2F" + op, "acme%2F" + op, "acme%2f" + op, "acme~2f" + op,
		"anon:x/" + op, "anon~3Ax~2F" + op, "anon%3Ax%2F" + op, "anon:x~2F" + op,
		"acme~2Fab~7Ecd" + op, "acme/ab~cd" + op, "acme%7E2F" + op, "acme~7E2F" + op,
		"..%2F..", "..~2F" + dots, "acme//" + op, "acme/" + op + "/", "~", "~2", "%", "%2",
		"acm~C3~A9~2F" + op, "ac%20me%2F" + op, op, "", "/",
	} {
		f.Add(s)
	}
}

// FuzzParseID: ParseID never panics, and whatever it accepts is a bound id
// of the OpenWOP identity.md §5 grammar whose projection (and percent form) parse back to it.
func FuzzParseID(f *testing.F) {
	addIDSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedID) || id != "" {
				t.Fatalf("ParseID(%q) = %q, %v", s, id, err)
			}
			if boundRE.MatchString(s) {
				t.Fatalf("ParseID refused %q, which matches the bound grammar", s)
			}
			return
		}
		if !ValidBound(id) || !boundRE.MatchString(id) {
			t.Fatalf("ParseID(%q) = %q, not a bound id", s, id)
		}
		p := Project(id)
		if strings.Contains(p, "/") || !projectedRE.MatchString(p) {
			t.Fatalf("Project(%q) = %q is not one segment", id, p)
		}
		if back, err := ParseID(p); err != nil || back != id {
			t.Fatalf("ParseID(Project(%q)) = %q, %v", id, back, err)
		}
	})
}

// FuzzUnproject: unproject never panics, inverts Project on any bytes, and
// anything it decodes re-projects to a string that decodes the same.
func FuzzUnproject(f *testing.F) {
	addIDSeeds(f)
	f.Add("\x00\xff~00~FF")
	f.Fuzz(func(t *testing.T, s string) {
		if u, err := unproject(Project(s)); err != nil || u != s {
			t.Fatalf("unproject(Project(%q)) = %q, %v", s, u, err)
		}
		u, err := unproject(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedID) || u != "" {
				t.Fatalf("unproject(%q) = %q, %v", s, u, err)
			}
			if !strings.Contains(s, "~") {
				t.Fatalf("unproject refused %q, which has no escape", s)
			}
			return
		}
		if len(u) > len(s) {
			t.Fatalf("unproject(%q) = %q grew", s, u)
		}
		if again, err := unproject(Project(u)); err != nil || again != u {
			t.Fatalf("unproject(Project(%q)) = %q, %v", u, again, err)
		}
	})
}

// FuzzResolveParam: never panics; a success is a bound id, and a bare
// success lands in the caller's tenant; every refusal has a known identity.
func FuzzResolveParam(f *testing.F) {
	addIDSeeds(f)
	s := interop.Subject{Tenant: "acme"}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, policy := range []BarePolicy{RefuseBare, BindBare} {
			id, err := ResolveParam(s, raw, policy)
			if err != nil {
				if id != "" || !errors.Is(err, ErrMalformedID) {
					t.Fatalf("ResolveParam(%q, %v) = %q, %v", raw, policy, id, err)
				}
				continue
			}
			if !ValidBound(id) {
				t.Fatalf("ResolveParam(%q, %v) = %q, not bound", raw, policy, id)
			}
			if _, perr := ParseID(raw); perr != nil {
				if policy != BindBare || TenantOf(id) != "acme" {
					t.Fatalf("bare %q resolved to %q under %v", raw, id, policy)
				}
			}
		}
	})
}
