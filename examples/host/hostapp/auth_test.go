package hostapp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

func TestParseKeys(t *testing.T) {
	got, err := parseKeys(" acme=k1 , initech.eu=Zm9v+/_~.-==")
	want := []tenantKey{{"acme", "k1"}, {"initech.eu", "Zm9v+/_~.-=="}}
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("parseKeys = %v, %v", got, err)
	}
	if got, err := parseKeys(defaultKeys); err != nil || len(got) != 2 || got[0] != (tenantKey{"acme", "demo-acme"}) || got[1] != (tenantKey{"globex", "demo-globex"}) {
		t.Errorf("default keys = %v, %v", got, err)
	}

	for _, tt := range []struct {
		spec, want string
	}{
		{"", "no keys given"},
		{"acme", "entry 1: want tenant=key"},
		{"acme=k1,globex", "entry 2: want tenant=key"},
		{"ac me=k1", `entry 1: "ac me" is not a valid tenant`},
		{"=k1", `entry 1: "" is not a valid tenant`},
		{"anon:x=k1", `entry 1: "anon:x" is not a valid tenant`},
		{"ac/me=k1", `"ac/me" is not a valid tenant`},
		{strings.Repeat("t", 129) + "=k1", "is not a valid tenant"},
		{"acme=", `entry 1 (tenant "acme"): the key is empty`},
		{"acme=k1,acme=k2", `entry 2: tenant "acme" appears twice`},
		{"acme=sekrit1,globex=sekrit1", `entry 2 (tenant "globex"): the key is already given to tenant "acme"`},
		{"acme=sek rit", `entry 1 (tenant "acme"): the key must use only`},
		{"acme=sekrit=x", `entry 1 (tenant "acme"): the key must use only`},
		{"acme==", `entry 1 (tenant "acme"): the key must use only`},
	} {
		_, err := parseKeys(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseKeys(%q) = %v, want %q", tt.spec, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "sek rit") {
			t.Errorf("parseKeys(%q) error shows the key: %v", tt.spec, err)
		}
	}
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{defaultKeys, "a=b", "a=b,a=c", "=", ",", "anon:x=y", "a=b==,c=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		keys, err := parseKeys(spec)
		if err != nil {
			return
		}
		tenants, secrets := map[string]bool{}, map[string]bool{}
		for _, k := range keys {
			if tenants[k.Tenant] || secrets[k.Key] || !isToken68(k.Key) || strings.HasPrefix(k.Tenant, "anon:") {
				t.Fatalf("%q produced %+v", spec, keys)
			}
			tenants[k.Tenant], secrets[k.Key] = true, true
		}
		// Every accepted key authenticates as its tenant.
		b := newBearerKeys(keys)
		for _, k := range keys {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer "+k.Key)
			sub, err := b.ResolveSubject(r)
			if err != nil || sub.Tenant != k.Tenant {
				t.Fatalf("%q: key of %q resolves to %+v, %v", spec, k.Tenant, sub, err)
			}
		}
	})
}

func TestResolveSubject(t *testing.T) {
	b := newBearerKeys([]tenantKey{{"acme", "demo-acme"}, {"globex", "demo-globex"}})
	for _, tt := range []struct {
		name    string
		headers []string
		tenant  string
	}{
		{"acme", []string{"Bearer demo-acme"}, "acme"},
		{"globex", []string{"Bearer demo-globex"}, "globex"},
		{"scheme is case-insensitive", []string{"bearer demo-acme"}, "acme"},
		{"extra spaces", []string{"Bearer   demo-acme"}, "acme"},
		{"none", nil, ""},
		{"unknown key", []string{"Bearer demo-initech"}, ""},
		{"prefix of a key", []string{"Bearer demo-acm"}, ""},
		{"key with suffix", []string{"Bearer demo-acmee"}, ""},
		{"basic scheme", []string{"Basic ZGVtbzpkZW1vLWFjbWU="}, ""},
		{"no token", []string{"Bearer"}, ""},
		{"empty token", []string{"Bearer "}, ""},
		{"trailing junk", []string{"Bearer demo-acme x"}, ""},
		{"two headers", []string{"Bearer demo-acme", "Bearer demo-acme"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			sub, err := b.ResolveSubject(r)
			if tt.tenant == "" {
				if !errors.Is(err, interop.ErrUnauthenticated) || sub.Authenticated || sub.Tenant != "" {
					t.Errorf("= %+v, %v; want ErrUnauthenticated and the zero Subject", sub, err)
				}
				return
			}
			want := interop.Subject{Tenant: tt.tenant, Principal: "key:" + tt.tenant, Authenticated: true}
			if err != nil || !cmp.Equal(sub, want) {
				t.Errorf("= %+v, %v; want %+v", sub, err, want)
			}
		})
	}
	if got := b.Tenants(); !cmp.Equal(got, []string{"acme", "globex"}) {
		t.Errorf("Tenants = %v", got)
	}
}

// A resolver that returns an unauthenticated or tenantless Subject without
// an error is still refused: the host serves no anonymous callers.
func TestAuthedRefusesAnonymousSubjects(t *testing.T) {
	for name, res := range map[string]interop.SubjectResolverFunc{
		"anonymous": func(*http.Request) (interop.Subject, error) { return interop.Subject{Tenant: "acme"}, nil },
		"no tenant": func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Authenticated: true, Principal: "p"}, nil
		},
		"forbidden": func(*http.Request) (interop.Subject, error) { return interop.Subject{}, interop.ErrForbidden },
		"broken": func(*http.Request) (interop.Subject, error) {
			return interop.Subject{}, errors.New("directory down: ldap://10.0.0.1")
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newTestHost(t, func(c *config) { c.Auth = res })
			r := h.get("/agents", "")
			switch name {
			case "forbidden":
				wantError(t, r, http.StatusForbidden, codeForbidden)
			case "broken":
				wantError(t, r, http.StatusInternalServerError, codeInternal)
				if strings.Contains(string(r.Body), "ldap") {
					t.Errorf("500 leaks the cause: %s", r.Body)
				}
			default:
				wantError(t, r, http.StatusUnauthorized, codeUnauthenticated)
				if r.Header.Get("WWW-Authenticate") != "Bearer" {
					t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
				}
			}
		})
	}
}
